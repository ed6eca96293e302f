// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// testing/http_server.h: an in-process HTTP server on loopback, the heart of
// dataecho::testing.
//
// dataecho::testing (target `dataecho::testing`, include "testing/...") is a
// small library of fixtures that programs may use, not only tests: the
// tests, the benchmarks, echo_bench (its default dataset is served by it, with
// added latency) and the example trainer stand on it. It uses no test
// framework, so a tool or a benchmark links it without GoogleTest. It is built
// with the project (any of the tests, benchmarks, examples or tools), not
// installed; the library itself never depends on it. See docs/testing.md.
//
// HttpServer is built on libmicrohttpd. It binds 127.0.0.1 on a free port and
// serves objects held in memory and/or the files of a directory, with single
// byte ranges (206 + Content-Range, 416 past the end), ETags, If-Match (412 on
// a mismatch) and HEAD. It can emulate a remote object store (added latency
// per request, a bandwidth cap shared by all responses) and fail on a script:
// status codes with Retry-After, connection reset after N bytes, stalls, short
// bodies, a wrong Content-Range, 200 to a ranged request, the object replaced
// mid-read. It counts and logs requests, and custom routes (SetRoute) emulate
// service APIs.
//
//   #include "testing/http_server.h"
//
//   absl::StatusOr<std::unique_ptr<dataecho::testing::HttpServer>> server =
//       dataecho::testing::HttpServer::Start({.latency = absl::Milliseconds(5)});
//   if (!server.ok()) return server.status();
//   (*server)->Put("/data/train.tfrecord", bytes);
//   (*server)->AddFault({.kind = dataecho::testing::HttpFault::Kind::kReset,
//                        .after_bytes = 4096});  // the first GET breaks off
//   auto source = dataecho::MakeTFRecordSource(
//       dataecho::OpenObjectStore(), {(*server)->url() + "/data/train.tfrecord"});
//   ...                                  // reads resume after the reset
//   int64_t gets = (*server)->request_count("/data/");
//
// Thread safety: all methods are thread-safe. Requests are served on one
// thread per connection; the destructor wakes stalled responses and returns
// once every connection is closed.
#ifndef DATAECHO_TESTING_HTTP_SERVER_H_
#define DATAECHO_TESTING_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace dataecho::testing {

struct HttpServerOptions {
  // Files under this directory are served at "/" + their relative path
  // (in-memory objects of the same path win). Empty: none.
  std::string directory;
  // Added before every response.
  absl::Duration latency = absl::ZeroDuration();
  // Cap on the bytes per second of all response bodies together; 0 = none.
  double bytes_per_second = 0;
  // Bytes handed to the socket per write.
  size_t block_size = 256 << 10;
};

// One scripted failure. The first fault that matches a request (method and
// path) applies to it; it fires `times` times after letting `skip` matching
// requests through.
struct HttpFault {
  enum class Kind {
    kStatus,             // reply `status` (with Retry-After if set), no object bytes
    kReset,              // send `after_bytes` of the body, then drop the connection
    kStall,              // send `after_bytes`, send nothing for `stall`, then drop
    kShortBody,          // a complete response whose body ends after `after_bytes`
                         // while Content-Range promises the full range
    kWrongContentRange,  // 206 for a range starting `range_shift` bytes off
                         // (Content-Range and body agree with each other)
    kIgnoreRange,        // 200 with the whole object
    kReplaceObject,      // send `after_bytes`, replace the object with
                         // `replacement` (new ETag), then drop the connection
  };
  Kind kind = Kind::kStatus;
  std::string method = "GET";
  // Only paths containing this; empty: all.
  std::string path_substring;
  int status = 503;
  // Sent as the Retry-After header when not empty (kStatus).
  std::string retry_after;
  uint64_t after_bytes = 0;
  absl::Duration stall = absl::Seconds(30);
  int64_t range_shift = 0;
  std::string replacement;
  int skip = 0;
  // -1: forever.
  int times = 1;
};

// What the server saw of one request.
struct HttpRequestLog {
  std::string method;
  std::string path;                            // without the query
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // names lower-cased
  int status = 0;                              // what was replied
};

// A reply from a custom route (see HttpServer::SetRoute).
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::map<std::string, std::string> headers;
  // If set, serve this object (with ranges, ETag and faults) instead.
  std::optional<std::string> object_path;
};

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT"
  std::string url() const;

  // Adds or replaces an in-memory object; a new version gets a new ETag.
  void Put(const std::string& path, std::string bytes);
  void Remove(const std::string& path);
  struct Object {
    std::shared_ptr<const std::string> bytes;
    int64_t generation = 0;
    std::string etag;  // quoted
  };
  std::optional<Object> Get(const std::string& path) const;
  // In-memory paths starting with `prefix`, sorted.
  std::vector<std::string> Paths(const std::string& prefix) const;

  void AddFault(HttpFault fault);
  void ClearFaults();

  // Custom routes, tried before objects: return a reply to take the request.
  using Route = std::function<std::optional<HttpReply>(const HttpRequestLog&)>;
  void SetRoute(Route route);

  int64_t request_count() const;
  // Requests whose path contains `path_substring`.
  int64_t request_count(const std::string& path_substring) const;
  std::vector<HttpRequestLog> requests() const;
  int64_t faults_fired() const;
  // Connections accepted so far.
  int64_t connection_count() const;
  void ClearLog();

  // Implementation details, used by the libmicrohttpd callbacks.
  struct Body;
  int HandleRequest(MHD_Connection* connection, const char* url, const char* method);
  // Sleeps until `deadline` or shutdown; false on shutdown.
  bool SleepUntil(absl::Time deadline);
  absl::Time ReserveBandwidth(size_t bytes);
  void ReplaceObject(const std::string& path, const std::string& bytes);
  void CountConnection();

 private:
  explicit HttpServer(const HttpServerOptions& options) : options_(options) {}
  std::optional<HttpFault> TakeFault(const HttpRequestLog& request);
  std::optional<Object> Lookup(const std::string& path) const;
  void Record(HttpRequestLog log);

  const HttpServerOptions options_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;

  mutable absl::Mutex mu_;
  std::map<std::string, Object> objects_ ABSL_GUARDED_BY(mu_);
  int64_t next_generation_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<HttpFault> faults_ ABSL_GUARDED_BY(mu_);
  Route route_ ABSL_GUARDED_BY(mu_);
  std::vector<HttpRequestLog> log_ ABSL_GUARDED_BY(mu_);
  int64_t faults_fired_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t connections_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time link_free_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTING_HTTP_SERVER_H_
