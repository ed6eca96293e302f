// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "testing/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "fmt/format.h"

namespace dataecho::testing {

struct HttpServer::Body {
  HttpServer* server;
  std::shared_ptr<const std::string> bytes;
  std::string path;
  uint64_t begin = 0;   // object offset of the first body byte
  uint64_t length = 0;  // body bytes
  std::optional<HttpFault> fault;
};

namespace {

ssize_t ReadBody(void* cls, uint64_t pos, char* buf, size_t max) {
  auto* body = static_cast<HttpServer::Body*>(cls);
  uint64_t limit = body->length;
  if (body->fault) {
    const HttpFault& f = *body->fault;
    bool drops = f.kind == HttpFault::Kind::kReset || f.kind == HttpFault::Kind::kStall ||
                 f.kind == HttpFault::Kind::kReplaceObject;
    if (drops && pos >= f.after_bytes) {
      if (f.kind == HttpFault::Kind::kStall) {
        body->server->SleepUntil(absl::Now() + f.stall);
      } else if (f.kind == HttpFault::Kind::kReplaceObject) {
        body->server->ReplaceObject(body->path, f.replacement);
      }
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (drops) limit = std::min<uint64_t>(limit, f.after_bytes);
  }
  if (pos >= limit) return MHD_CONTENT_READER_END_OF_STREAM;
  size_t n = static_cast<size_t>(std::min<uint64_t>(max, limit - pos));
  std::memcpy(buf, body->bytes->data() + body->begin + pos, n);
  if (!body->server->SleepUntil(body->server->ReserveBandwidth(n))) {
    return MHD_CONTENT_READER_END_WITH_ERROR;
  }
  return static_cast<ssize_t>(n);
}

void FreeBody(void* cls) { delete static_cast<HttpServer::Body*>(cls); }

void NotifyConnection(void* cls, MHD_Connection* /*connection*/, void** /*socket_context*/,
                      MHD_ConnectionNotificationCode code) {
  if (code == MHD_CONNECTION_NOTIFY_STARTED) static_cast<HttpServer*>(cls)->CountConnection();
}

MHD_Result Access(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/, size_t* upload_data_size,
                  void** req_cls) {
  // Bodies of uploads are read and dropped; the reply comes with the last
  // call, also for GET and HEAD: a reply queued in the first call (before
  // libmicrohttpd has seen the whole request) makes it close the connection
  // after the response ("Connection: close"), so no connection was ever
  // reused and every request paid a new connection and server thread.
  if (*req_cls == nullptr) {
    static int marker;
    *req_cls = &marker;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  auto* server = static_cast<HttpServer*>(cls);
  return server->HandleRequest(connection, url, method) ? MHD_YES : MHD_NO;
}

MHD_Result CollectPair(void* cls, MHD_ValueKind /*kind*/, const char* key, const char* value) {
  auto* out = static_cast<std::map<std::string, std::string>*>(cls);
  std::string k(key);
  (*out)[k] = value ? value : "";
  return MHD_YES;
}

bool Queue(MHD_Connection* connection, int status, MHD_Response* response) {
  bool ok = MHD_queue_response(connection, static_cast<unsigned>(status), response) == MHD_YES;
  MHD_destroy_response(response);
  return ok;
}

bool ReplyText(MHD_Connection* connection, int status, const std::string& text,
               const std::map<std::string, std::string>& headers, const char* type) {
  MHD_Response* r = MHD_create_response_from_buffer(text.size(), const_cast<char*>(text.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(r, "Content-Type", type);
  for (const auto& [k, v] : headers) MHD_add_response_header(r, k.c_str(), v.c_str());
  return Queue(connection, status, r);
}

// Parses "bytes=a-b", "bytes=a-" or "bytes=-n" against `size`. False if not
// a single range we understand (then the whole object is served).
bool ParseRange(const std::string& header, uint64_t size, uint64_t* first, uint64_t* last) {
  if (header.rfind("bytes=", 0) != 0 || header.find(',') != std::string::npos) return false;
  std::string spec = header.substr(6);
  size_t dash = spec.find('-');
  if (dash == std::string::npos) return false;
  std::string a = spec.substr(0, dash), b = spec.substr(dash + 1);
  uint64_t x = 0, y = 0;
  if (a.empty()) {  // suffix
    if (!absl::SimpleAtoi(b, &y) || y == 0) return false;
    *first = size > y ? size - y : 0;
    *last = size == 0 ? 0 : size - 1;
    return true;
  }
  if (!absl::SimpleAtoi(a, &x)) return false;
  if (b.empty()) {
    y = size == 0 ? 0 : size - 1;
  } else if (!absl::SimpleAtoi(b, &y) || y < x) {
    return false;
  }
  *first = x;
  *last = std::min<uint64_t>(y, size == 0 ? 0 : size - 1);
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options) {
  std::unique_ptr<HttpServer> server(new HttpServer(options));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
  server->daemon_ =
      MHD_start_daemon(flags, 0, nullptr, nullptr, &Access, server.get(), MHD_OPTION_SOCK_ADDR,
                       &addr, MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_NOTIFY_CONNECTION,
                       &NotifyConnection, server.get(), MHD_OPTION_END);
  if (server->daemon_ == nullptr) return absl::UnavailableError("cannot start the HTTP server");
  const MHD_DaemonInfo* info = MHD_get_daemon_info(server->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  if (info == nullptr || info->port == 0) {
    return absl::UnavailableError("cannot find the HTTP server's port");
  }
  server->port_ = info->port;
  return server;
}

HttpServer::~HttpServer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
}

std::string HttpServer::url() const { return fmt::format("http://127.0.0.1:{}", port_); }

void HttpServer::Put(const std::string& path, std::string bytes) {
  absl::MutexLock lock(&mu_);
  Object& o = objects_[path];
  o.bytes = std::make_shared<const std::string>(std::move(bytes));
  o.generation = next_generation_++;
  o.etag = fmt::format("\"g{}-{}\"", o.generation, o.bytes->size());
}

void HttpServer::ReplaceObject(const std::string& path, const std::string& bytes) {
  Put(path, bytes);
}

void HttpServer::Remove(const std::string& path) {
  absl::MutexLock lock(&mu_);
  objects_.erase(path);
}

std::optional<HttpServer::Object> HttpServer::Get(const std::string& path) const {
  return Lookup(path);
}

std::optional<HttpServer::Object> HttpServer::Lookup(const std::string& path) const {
  {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(path);
    if (it != objects_.end()) return it->second;
  }
  if (options_.directory.empty() || path.find("/..") != std::string::npos) return std::nullopt;
  std::string file = options_.directory + path;
  struct stat st;
  if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // Files are cached in memory while unchanged (keyed by mtime and size).
  std::string etag =
      fmt::format("\"f{}.{}-{}\"", static_cast<int64_t>(st.st_mtim.tv_sec),
                  static_cast<int64_t>(st.st_mtim.tv_nsec), static_cast<uint64_t>(st.st_size));
  static absl::Mutex cache_mu(absl::kConstInit);
  static auto* cache = new std::map<std::string, Object>();
  absl::MutexLock lock(&cache_mu);
  Object& cached = (*cache)[file];
  if (cached.etag != etag) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    cached.bytes = std::make_shared<const std::string>(ss.str());
    cached.etag = etag;
    cached.generation = static_cast<int64_t>(st.st_mtim.tv_sec);
  }
  return cached;
}

std::vector<std::string> HttpServer::Paths(const std::string& prefix) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (auto it = objects_.lower_bound(prefix); it != objects_.end(); ++it) {
    if (it->first.rfind(prefix, 0) != 0) break;
    out.push_back(it->first);
  }
  return out;
}

void HttpServer::AddFault(HttpFault fault) {
  absl::MutexLock lock(&mu_);
  faults_.push_back(std::move(fault));
}

void HttpServer::ClearFaults() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
}

void HttpServer::SetRoute(Route route) {
  absl::MutexLock lock(&mu_);
  route_ = std::move(route);
}

int64_t HttpServer::request_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(log_.size());
}

int64_t HttpServer::request_count(const std::string& path_substring) const {
  absl::MutexLock lock(&mu_);
  return std::count_if(log_.begin(), log_.end(), [&](const HttpRequestLog& r) {
    return r.path.find(path_substring) != std::string::npos;
  });
}

std::vector<HttpRequestLog> HttpServer::requests() const {
  absl::MutexLock lock(&mu_);
  return log_;
}

int64_t HttpServer::faults_fired() const {
  absl::MutexLock lock(&mu_);
  return faults_fired_;
}

int64_t HttpServer::connection_count() const {
  absl::MutexLock lock(&mu_);
  return connections_;
}

void HttpServer::CountConnection() {
  absl::MutexLock lock(&mu_);
  ++connections_;
}

void HttpServer::ClearLog() {
  absl::MutexLock lock(&mu_);
  log_.clear();
}

void HttpServer::Record(HttpRequestLog log) {
  absl::MutexLock lock(&mu_);
  log_.push_back(std::move(log));
}

bool HttpServer::SleepUntil(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithDeadline(absl::Condition(&stopping_), deadline);
  return !stopping_;
}

absl::Time HttpServer::ReserveBandwidth(size_t bytes) {
  absl::Time now = absl::Now();
  if (options_.bytes_per_second <= 0) return now;
  absl::MutexLock lock(&mu_);
  link_free_ = std::max(now, link_free_) +
               absl::Seconds(static_cast<double>(bytes) / options_.bytes_per_second);
  return link_free_;
}

std::optional<HttpFault> HttpServer::TakeFault(const HttpRequestLog& request) {
  absl::MutexLock lock(&mu_);
  for (HttpFault& f : faults_) {
    if (f.times == 0 || f.method != request.method) continue;
    if (request.path.find(f.path_substring) == std::string::npos) continue;
    if (f.skip > 0) {
      --f.skip;
      continue;
    }
    if (f.times > 0) --f.times;
    ++faults_fired_;
    return f;
  }
  return std::nullopt;
}

int HttpServer::HandleRequest(MHD_Connection* connection, const char* url, const char* method) {
  HttpRequestLog log;
  log.method = method;
  log.path = url;
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectPair, &log.query);
  std::map<std::string, std::string> raw_headers;
  MHD_get_connection_values(connection, MHD_HEADER_KIND, &CollectPair, &raw_headers);
  for (const auto& [k, v] : raw_headers) {
    std::string lower = k;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    log.headers[lower] = v;
  }
  if (!SleepUntil(absl::Now() + options_.latency)) return false;

  auto reply = [&](int status, const std::string& text,
                   const std::map<std::string, std::string>& headers = {},
                   const char* type = "text/plain") {
    log.status = status;
    Record(log);
    return ReplyText(connection, status, text, headers, type);
  };

  std::string object_path = log.path;
  Route route;
  {
    absl::MutexLock lock(&mu_);
    route = route_;
  }
  if (route) {
    std::optional<HttpReply> r = route(log);
    if (r && !r->object_path) {
      return reply(r->status, r->body, r->headers, r->content_type.c_str());
    }
    if (r) object_path = *r->object_path;
  }
  std::optional<HttpFault> fault = TakeFault(log);
  if (fault && fault->kind == HttpFault::Kind::kStatus) {
    std::map<std::string, std::string> headers;
    if (!fault->retry_after.empty()) headers["Retry-After"] = fault->retry_after;
    return reply(fault->status, fmt::format("injected status {}\n", fault->status), headers);
  }
  if (log.method != "GET" && log.method != "HEAD") return reply(405, "method not allowed\n");
  std::optional<Object> object = Lookup(object_path);
  if (!object) return reply(404, "no such object\n");
  auto if_match = log.headers.find("if-match");
  if (if_match != log.headers.end() && if_match->second != "*" &&
      if_match->second != object->etag) {
    return reply(412, "etag does not match\n");
  }
  const uint64_t size = object->bytes->size();
  uint64_t first = 0, last = size == 0 ? 0 : size - 1;
  bool ranged = false;
  auto range = log.headers.find("range");
  if (range != log.headers.end() && !(fault && fault->kind == HttpFault::Kind::kIgnoreRange)) {
    ranged = ParseRange(range->second, size, &first, &last);
    if (ranged && first >= size) {
      return reply(416, "range not satisfiable\n",
                   {{"Content-Range", fmt::format("bytes */{}", size)}});
    }
  }
  if (ranged && fault && fault->kind == HttpFault::Kind::kWrongContentRange) {
    int64_t shifted = static_cast<int64_t>(first) + fault->range_shift;
    first = static_cast<uint64_t>(std::clamp<int64_t>(shifted, 0, static_cast<int64_t>(last)));
  }
  auto* body =
      new Body{this, object->bytes, object_path, first, size == 0 ? 0 : last - first + 1, fault};
  uint64_t content_length = body->length;
  if (fault && fault->kind == HttpFault::Kind::kShortBody) {
    content_length = std::min<uint64_t>(fault->after_bytes, body->length);
    body->length = content_length;
  }
  MHD_Response* r = MHD_create_response_from_callback(content_length, options_.block_size,
                                                      &ReadBody, body, &FreeBody);
  MHD_add_response_header(r, "ETag", object->etag.c_str());
  MHD_add_response_header(r, "Accept-Ranges", "bytes");
  MHD_add_response_header(r, "Content-Type", "application/octet-stream");
  int status = 200;
  if (ranged) {
    status = 206;
    std::string content_range = fmt::format("bytes {}-{}/{}", first, last, size);
    MHD_add_response_header(r, "Content-Range", content_range.c_str());
  }
  log.status = status;
  Record(log);
  return Queue(connection, status, r);
}

}  // namespace dataecho::testing
