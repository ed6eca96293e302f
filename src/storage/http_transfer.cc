// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/http_transfer.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "absl/time/clock.h"
#include "fmt/format.h"

namespace dataecho::internal {
namespace {

constexpr size_t kMaxBody = size_t{64} << 20;
constexpr size_t kMaxErrorBody = 4096;

size_t HeaderTrampoline(char* data, size_t size, size_t n, void* transfer) {
  return static_cast<HttpTransfer*>(transfer)->OnHeader(std::string_view(data, size * n));
}

size_t BodyTrampoline(char* data, size_t size, size_t n, void* transfer) {
  return static_cast<HttpTransfer*>(transfer)->OnBody(data, size * n);
}

}  // namespace

void HttpTransfer::Begin(void* handle, const HttpOptions& http) {
  const HttpRequest& request = job.request();
  HttpResult& result = job.result();
  CURL* easy = static_cast<CURL*>(handle);
  this->easy = easy;
  body_checked = false;
  accepts_body = false;
  skip = 0;
  attempt.body_error.clear();
  attempt.start_received = result.received;
  attempt.stalled = false;
  last_progress = absl::Now();
  result.attempt_started = last_progress;
  result.headers.clear();
  result.body.clear();
  ++result.attempts;
  if (request.ranged && result.data.size() < request.end - request.begin) {
    result.data = MutableBuffer(static_cast<size_t>(request.end - request.begin));
  }
  curl_slist* list = nullptr;
  for (const std::string& h : request.headers) list = curl_slist_append(list, h.c_str());
  if (request.ranged) {
    list = curl_slist_append(
        list, fmt::format("Range: bytes={}-{}", request.begin + result.received, request.end - 1)
                  .c_str());
  }
  header_list = list;
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(http.connect_timeout)));
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, http.user_agent.c_str());
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, http.verify_tls ? 1L : 0L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, http.verify_tls ? 2L : 0L);
  if (request.head) curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  if (!request.aws_sigv4.empty()) {
    curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
    curl_easy_setopt(easy, CURLOPT_USERPWD, request.userpwd.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &HeaderTrampoline);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &BodyTrampoline);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, &job);
}

void* HttpTransfer::End() {
  curl_slist_free_all(static_cast<curl_slist*>(header_list));
  header_list = nullptr;
  void* handle = easy;
  easy = nullptr;
  return handle;
}

size_t HttpTransfer::OnHeader(std::string_view line) {
  HttpResult& result = job.result();
  last_progress = absl::Now();
  if (line.rfind("HTTP/", 0) == 0) {
    result.headers.clear();  // a new response (after a redirect or a 100)
    return line.size();
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    result.headers[name] = TrimWhitespace(line.substr(colon + 1));
  }
  return line.size();
}

bool HttpTransfer::CheckFirstBody() {
  const HttpRequest& request = job.request();
  HttpResult& result = job.result();
  long code = 0;
  curl_easy_getinfo(static_cast<CURL*>(easy), CURLINFO_RESPONSE_CODE, &code);
  accepts_body = code >= 200 && code < 300;
  if (!accepts_body) {
    result.body.clear();
    return true;  // an error body: kept (in part) for the error's detail
  }
  auto seen = result.headers.find(request.version_header);
  if (seen != result.headers.end() && !version.empty() && seen->second != version) {
    attempt.refused = absl::FailedPreconditionError(
        fmt::format("{}: object changed while being read{} (version {} is now {})", request.display,
                    RangeWhere(request, result.received), version, seen->second));
    return false;
  }
  if (seen != result.headers.end() && version.empty()) version = seen->second;
  if (!request.ranged) return true;
  const uint64_t want = request.begin + result.received;
  if (code == 206) {
    int64_t first, object_size;
    auto cr = result.headers.find("content-range");
    if (cr == result.headers.end() || !ParseContentRange(cr->second, &first, &object_size) ||
        first < 0) {
      attempt.body_error = "206 without a valid Content-Range";
      return false;
    }
    if (object_size >= 0) result.object_size = object_size;
    if (static_cast<uint64_t>(first) > want) {
      attempt.body_error =
          fmt::format("Content-Range starts at byte {}, asked for {}", first, want);
      return false;
    }
    skip = want - static_cast<uint64_t>(first);
  } else {  // a 200 carries the whole object: skip to the wanted byte
    curl_off_t length = -1;
    curl_easy_getinfo(static_cast<CURL*>(easy), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length >= 0) result.object_size = length;
    skip = want;
  }
  return true;
}

size_t HttpTransfer::OnBody(const char* data, size_t total) {
  const HttpRequest& request = job.request();
  HttpResult& result = job.result();
  last_progress = absl::Now();
  if (!body_checked) {
    body_checked = true;
    if (!CheckFirstBody()) return 0;
  }
  if (!accepts_body) {
    if (result.body.size() < kMaxErrorBody) {
      result.body.append(data, std::min(total, kMaxErrorBody));
    }
    return total;
  }
  if (!request.ranged) {
    if (result.body.size() + total > kMaxBody) {
      attempt.refused = absl::ResourceExhaustedError(
          fmt::format("{}: response body larger than {} bytes", request.display, kMaxBody));
      return 0;
    }
    result.body.append(data, total);
    return total;
  }
  size_t skipped = static_cast<size_t>(std::min<uint64_t>(skip, total));
  skip -= skipped;
  size_t len = total - skipped;
  uint64_t room = (request.end - request.begin) - result.received;
  size_t take = static_cast<size_t>(std::min<uint64_t>(len, room));
  std::memcpy(result.data.data() + result.received, data + skipped, take);
  result.received += take;
  if (result.received == request.end - request.begin) {
    attempt.complete = true;
    if (take < len) return 0;  // more than asked for (a 200): stop, we have it all
  }
  return total;
}

}  // namespace dataecho::internal
