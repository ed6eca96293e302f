// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http_client.h: concurrent HTTP GET/HEAD with retries over libcurl's multi
// interface. Internal.
//
// One network thread drives every transfer of a client (connections are
// reused between them). A `HttpJob` is one logical request: a HEAD, a GET of
// a whole small body (metadata, listings), or a GET of the byte range
// [begin, end) of an object. The client retries it on transient failures as
// RetryOptions says; a ranged job resumes at the first byte it does not have
// yet, checks Content-Range (bytes before the wanted offset are skipped, a
// range starting after it is rejected and retried) and compares the response
// version (e.g. the ETag) with the pinned one (FAILED_PRECONDITION when it
// changed). Jobs finish exactly once: done, failed, or cancelled.
//
// Thread safety: HttpClient is thread-safe. A job's results may be read once
// Wait() returned.
#ifndef DATAECHO_SRC_STORAGE_HTTP_CLIENT_H_
#define DATAECHO_SRC_STORAGE_HTTP_CLIENT_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/buffer.h"
#include "dataecho/storage/store_options.h"

namespace dataecho::internal {

struct HttpRequest {
  std::string url;
  // Names the request in errors (the user's URI); never holds credentials.
  std::string display;
  bool head = false;
  std::vector<std::string> headers;  // "Name: value"
  // AWS SigV4 signing ("aws:amz:REGION:s3") with userpwd "KEY:SECRET".
  std::string aws_sigv4;
  std::string userpwd;
  // Strings never to be shown in errors (secrets, tokens).
  std::vector<std::string> secrets;
};

// Spaces the starts of a stream of requests (one reader's ranges) by an
// interval, on a schedule: each start is due one interval after the one
// before. A start late by up to half an interval (the network thread wakes up
// a little late, or was busy) keeps the schedule, so the next one makes the
// time up; a later one restarts it, so a gap is not followed by a burst. Used
// by the client's network thread only.
class StartPacer {
 public:
  // The earliest time of the next start.
  absl::Time next() const { return next_; }
  // Books a start at `now` (REQUIRES: now >= next()).
  void Started(absl::Time now, absl::Duration interval) {
    const bool on_schedule = now - next_ <= interval / 2;
    next_ = (on_schedule ? next_ : now) + interval;
  }

 private:
  absl::Time next_ = absl::InfinitePast();
};

class HttpJob {
 public:
  HttpRequest request;
  // A ranged GET of object bytes [begin, end); otherwise the whole body is
  // kept in `body` (up to 64 MiB).
  bool ranged = false;
  uint64_t begin = 0;
  uint64_t end = 0;
  // If not empty, responses must carry this value in `version_header`.
  std::string pinned_version;
  std::string version_header = "etag";
  // If set, every attempt waits for the pacer and books `pace` on it. It
  // also waits for the client's pacer of the job's host, which spaces the
  // starts of all paced jobs to that host by `round_trip` / the client's
  // concurrency, so that readers sharing the client do not start their
  // requests in bursts.
  std::shared_ptr<StartPacer> pacer;
  absl::Duration pace;
  absl::Duration round_trip;

  // Results, valid after the job is done.
  absl::Status status;
  int http_code = 0;
  std::map<std::string, std::string> headers;  // final response, lower-case names
  std::string body;
  MutableBuffer data;  // ranged: bytes [begin, begin + received)
  uint64_t received = 0;
  int64_t object_size = -1;  // from Content-Range, when seen
  int attempts = 0;
  absl::Time attempt_started;  // when the last attempt started
  absl::Time finished;         // when the job finished

  bool done() const {
    absl::MutexLock lock(&mu_);
    return done_;
  }

 private:
  friend class HttpClient;
  enum class State { kNew, kQueued, kActive, kWaiting, kDone };
  // Touched by the network thread only.
  State state_ = State::kNew;
  void* easy_ = nullptr;
  void* header_list_ = nullptr;
  int failures_in_row_ = 0;
  uint64_t attempt_start_received_ = 0;
  bool attempt_checked_ = false;  // first body byte of the attempt seen
  bool attempt_accepts_body_ = false;
  uint64_t attempt_skip_ = 0;
  std::string attempt_error_;  // why the attempt's body was refused
  absl::Status fatal_;         // set by a callback: finish with this
  bool complete_ = false;      // all wanted bytes are here
  absl::Time retry_at_;
  absl::Time last_progress_;  // last byte of the attempt (or its start)
  bool stalled_ = false;
  std::string last_cause_;
  StartPacer* host_pacer_ = nullptr;  // the client's pacer of the job's host, once looked up

  mutable absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

class HttpClient {
 public:
  HttpClient(const HttpOptions& http, const RetryOptions& retry);
  ~HttpClient();  // cancels every job and joins the network thread

  // Starts `job`. REQUIRES: not submitted before.
  void Submit(std::shared_ptr<HttpJob> job);
  // Makes the job finish promptly with CANCELLED (no-op once done).
  void Cancel(const std::shared_ptr<HttpJob>& job);
  // Blocks until the job is done; returns its status.
  static absl::Status Wait(HttpJob& job);
  // Submit + Wait.
  absl::Status Run(const std::shared_ptr<HttpJob>& job);

  const HttpOptions& http_options() const { return http_; }

  // libcurl callbacks.
  static size_t OnHeader(char* data, size_t size, size_t n, void* job);
  static size_t OnBody(char* data, size_t size, size_t n, void* job);

 private:
  void Loop();
  // Starts queued jobs in order while there are free slots, except paced jobs
  // whose pacers are not ready yet (they keep their places).
  void StartQueued();
  // The shared pacer of `job`'s host (looked up once per job), and the
  // earliest start of a paced job.
  StartPacer& HostPacer(HttpJob& job);
  absl::Time PacedStart(HttpJob& job);
  // Aborts attempts that received nothing for stall_timeout; returns the
  // next time one may stall.
  absl::Time AbortStalled();
  void StartAttempt(const std::shared_ptr<HttpJob>& job);
  void OnAttemptDone(const std::shared_ptr<HttpJob>& job, int curl_code);
  void Finish(const std::shared_ptr<HttpJob>& job, absl::Status status);
  void Detach(HttpJob& job);

  const HttpOptions http_;
  const RetryOptions retry_;
  void* multi_ = nullptr;
  int timer_fd_ = -1;  // ends the network thread's wait on time

  absl::Mutex mu_;
  std::vector<std::shared_ptr<HttpJob>> submitted_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<HttpJob>> cancelled_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  // Network thread only.
  std::deque<std::shared_ptr<HttpJob>> queued_;
  std::vector<std::shared_ptr<HttpJob>> waiting_;
  std::map<HttpJob*, std::shared_ptr<HttpJob>> active_;
  std::vector<void*> idle_easies_;
  std::map<std::string, StartPacer, std::less<>> host_pacers_;  // by scheme://authority

  std::thread thread_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_HTTP_CLIENT_H_
