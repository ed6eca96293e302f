// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http_client.h: concurrent HTTP GET/HEAD with retries over libcurl's multi
// interface. Internal.
//
// One network thread drives every transfer of a client (connections are
// reused between them). A `HttpJob` is one logical request (an HttpRequest:
// http_request.h), how to pace it (HttpJobOptions), and its HttpResult. The
// client makes attempts at it: each is one libcurl transfer
// (http_transfer.h), judged by ClassifyAttempt (http_response.h), and retried
// on transient failures as RetryOptions says; a ranged job resumes at the
// first byte it does not have yet, checks Content-Range (bytes before the
// wanted offset are skipped, a range starting after it is rejected and
// retried) and compares the response version (e.g. the ETag) with the pinned
// one (FAILED_PRECONDITION when it changed). Jobs finish exactly once: done,
// failed, or cancelled.
//
//   auto job = std::make_shared<HttpJob>(std::move(request));
//   if (absl::Status s = client.Run(job); s.ok()) Use(job->result().body);
//
// Thread safety: HttpClient is thread-safe. A job's result may be read once
// Wait() returned. A client inherited through fork() is not usable in the
// child (its network thread stayed in the parent); destroying it there leaves
// that thread and libcurl's state alone.
#ifndef DATAECHO_SRC_STORAGE_HTTP_CLIENT_H_
#define DATAECHO_SRC_STORAGE_HTTP_CLIENT_H_

#include <sys/types.h>
#include <unistd.h>

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
#include "dataecho/internal/pacer.h"
#include "dataecho/storage/store_options.h"
#include "storage/http_request.h"

namespace dataecho::internal {

// Spaces the starts of a stream of requests (one reader's ranges) by an
// interval, on a schedule (internal/pacer.h): each start is due one interval
// after the one before. A start late by up to half an interval (the network
// thread wakes up a little late, or was busy) keeps the schedule, so the next
// one makes the time up; a later one restarts it, so a gap is not followed by
// a burst. Used by the client's network thread only.
class StartPacer {
 public:
  // The earliest time of the next start.
  absl::Time next() const { return schedule_.end(); }
  // Books a start at `now` (REQUIRES: now >= next()).
  void Started(absl::Time now, absl::Duration interval) {
    schedule_.Book(now, interval, interval / 2);
  }

 private:
  Schedule schedule_;
};

// How the client schedules a job's attempts, and where its bytes go.
struct HttpJobOptions {
  // If set, every attempt waits for the pacer and books `pace` on it. It
  // also waits for the client's pacer of the job's host, which spaces the
  // starts of all paced jobs to that host by `round_trip` / the client's
  // concurrency, so that readers sharing the client do not start their
  // requests in bursts.
  std::shared_ptr<StartPacer> pacer;
  absl::Duration pace;
  absl::Duration round_trip;
  // A ranged job's bytes go here when it holds the whole range (a buffer
  // recycled from an earlier job), else into a new buffer.
  MutableBuffer buffer;
};

struct HttpTransfer;  // the network thread's state of a job (http_transfer.h)

// One request submitted to a client, with its result.
class HttpJob {
 public:
  explicit HttpJob(HttpRequest request, HttpJobOptions options = {});
  ~HttpJob();
  HttpJob(const HttpJob&) = delete;
  HttpJob& operator=(const HttpJob&) = delete;

  const HttpRequest& request() const { return request_; }
  const HttpJobOptions& options() const { return options_; }
  // The network thread writes the result until the job is done; others read
  // it once done() (HttpClient::Wait returned).
  const HttpResult& result() const { return result_; }
  HttpResult& result() { return result_; }

  bool done() const {
    absl::MutexLock lock(&mu_);
    return done_;
  }

 private:
  friend class HttpClient;

  const HttpRequest request_;
  HttpJobOptions options_;
  HttpResult result_;
  const std::unique_ptr<HttpTransfer> transfer_;

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
  const pid_t pid_ = getpid();  // the process whose network thread this is (fork())
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
