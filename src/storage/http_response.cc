// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/http_response.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "fmt/format.h"

namespace dataecho::internal {
namespace {

std::string Redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    for (size_t p = text.find(s); p != std::string::npos; p = text.find(s, p)) {
      text.replace(p, s.size(), "[redacted]");
    }
  }
  return text;
}

}  // namespace

std::string TrimWhitespace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool ParseContentRange(const std::string& v, int64_t* first, int64_t* total) {
  if (v.rfind("bytes ", 0) != 0) return false;
  std::string_view rest = std::string_view(v).substr(6);
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view range = rest.substr(0, slash), size = rest.substr(slash + 1);
  *first = -1;
  *total = -1;
  if (range != "*") {
    size_t dash = range.find('-');
    if (dash == std::string_view::npos) return false;
    uint64_t a;
    if (!absl::SimpleAtoi(std::string(range.substr(0, dash)), &a)) return false;
    *first = static_cast<int64_t>(a);
  }
  if (size != "*") {
    uint64_t t;
    if (!absl::SimpleAtoi(std::string(size), &t)) return false;
    *total = static_cast<int64_t>(t);
  }
  return true;
}

std::string ErrorDetail(const std::string& body, const std::vector<std::string>& secrets) {
  auto tag = [&](const char* name) -> std::string {
    std::string open = fmt::format("<{}>", name), close = fmt::format("</{}>", name);
    size_t a = body.find(open);
    if (a == std::string::npos) return "";
    size_t b = body.find(close, a);
    if (b == std::string::npos) return "";
    return body.substr(a + open.size(), b - a - open.size());
  };
  std::string detail;
  if (std::string code = tag("Code"); !code.empty()) {
    detail = code;
    if (std::string msg = tag("Message"); !msg.empty()) detail += ": " + msg;
  } else if (size_t m = body.find("\"message\""); m != std::string::npos) {
    size_t q1 = body.find('"', body.find(':', m) + 1);
    size_t q2 = q1 == std::string::npos ? q1 : body.find('"', q1 + 1);
    if (q2 != std::string::npos) detail = body.substr(q1 + 1, q2 - q1 - 1);
  } else {
    detail = TrimWhitespace(body.substr(0, body.find('\n')));
  }
  if (detail.size() > 200) detail = detail.substr(0, 200) + "...";
  detail = Redact(detail, secrets);
  return detail.empty() ? "" : " (" + detail + ")";
}

absl::Duration RetryDelay(const RetryOptions& retry, int failures_in_row,
                          const std::map<std::string, std::string>& headers) {
  static thread_local absl::BitGen gen;
  double base = absl::ToDoubleSeconds(retry.initial_backoff) *
                std::pow(2.0, std::min(failures_in_row - 1, 30));
  base = std::min(base, absl::ToDoubleSeconds(retry.max_backoff));
  absl::Duration delay = absl::Seconds(absl::Uniform(gen, base / 2, base + 1e-9));
  auto ra = headers.find("retry-after");
  if (ra != headers.end()) {
    absl::Duration asked = absl::ZeroDuration();
    int64_t seconds;
    if (absl::SimpleAtoi(ra->second, &seconds)) {
      asked = absl::Seconds(std::max<int64_t>(seconds, 0));
    } else if (time_t when = curl_getdate(ra->second.c_str(), nullptr); when > 0) {
      asked = absl::FromTimeT(when) - absl::Now();
    }
    delay = std::max(delay, std::min(asked, retry.max_retry_after));
  }
  return delay;
}

std::string RangeWhere(const HttpRequest& request, uint64_t received) {
  if (!request.ranged) return "";
  return fmt::format(" at offset {} (range {}-{})", request.begin + received, request.begin,
                     request.end - 1);
}

namespace {

AttemptVerdict Done(AttemptVerdict v) {
  v.kind = AttemptVerdict::kDone;
  v.status = absl::OkStatus();
  return v;
}

AttemptVerdict Fail(AttemptVerdict v, absl::Status status) {
  v.kind = AttemptVerdict::kFail;
  v.status = std::move(status);
  return v;
}

// The error a final response other than 2xx, 416 and the retried codes means.
absl::Status ResponseError(const HttpRequest& request, const HttpResult& result) {
  const int code = result.http_code;
  std::string msg =
      fmt::format("{}: HTTP {}{}{}", request.display, code,
                  ErrorDetail(result.body, request.secrets), RangeWhere(request, result.received));
  switch (code) {
    case 404: return absl::NotFoundError(msg);
    case 401:
    case 403: return absl::PermissionDeniedError(msg);
    case 412: return absl::FailedPreconditionError(msg + ": object changed");
    default:
      if (code >= 400) return absl::InvalidArgumentError(msg);
      return absl::UnknownError(msg);
  }
}

}  // namespace

AttemptVerdict ClassifyAttempt(const HttpRequest& request, const HttpResult& result,
                               const HttpAttempt& attempt, const RetryOptions& retry,
                               absl::Duration stall_timeout) {
  AttemptVerdict v;
  v.failures_in_row = attempt.failures_in_row;
  v.object_size = result.object_size;
  if (!attempt.refused.ok()) return Fail(std::move(v), attempt.refused);
  if (attempt.complete) return Done(std::move(v));
  const std::string& who = request.display;
  const int code = result.http_code;
  const uint64_t at = request.begin + result.received;  // the next byte wanted
  std::string cause;
  if (!attempt.body_error.empty()) {
    cause = attempt.body_error;
  } else if (attempt.curl_code != CURLE_OK) {
    auto err = static_cast<CURLcode>(attempt.curl_code);
    std::string what = curl_easy_strerror(err);
    switch (err) {
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_COULDNT_CONNECT:
        if (!retry.retry_connect_errors) {
          return Fail(std::move(v),
                      absl::UnavailableError(fmt::format("{}: {} (not retried)", who, what)));
        }
        break;
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return Fail(std::move(v), absl::InvalidArgumentError(fmt::format("{}: {}", who, what)));
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
        return Fail(std::move(v), absl::UnavailableError(fmt::format("{}: {}", who, what)));
      case CURLE_OPERATION_TIMEDOUT:
        if (attempt.stalled) {
          what = fmt::format("stalled: no data for {}", absl::FormatDuration(stall_timeout));
        }
        break;
      default: break;
    }
    cause = request.ranged ? fmt::format("{} after {} bytes", what, result.received) : what;
  } else if (code >= 200 && code < 300) {
    if (!request.ranged) return Done(std::move(v));
    if (v.object_size >= 0 && at >= static_cast<uint64_t>(v.object_size)) {
      return Done(std::move(v));  // the object ends before the range does
    }
    cause = fmt::format("short body: {} of {} bytes", result.received, request.end - request.begin);
  } else if (code == 416 && request.ranged) {
    int64_t first, size = -1;
    auto cr = result.headers.find("content-range");
    if (cr != result.headers.end()) ParseContentRange(cr->second, &first, &size);
    if (size >= 0) v.object_size = size;
    if (size < 0 || at >= static_cast<uint64_t>(size)) {
      return Done(std::move(v));  // at the end: a clean, empty read
    }
    return Fail(std::move(v), absl::FailedPreconditionError(
                                  fmt::format("{}: object shrank to {} bytes while being read{}",
                                              who, size, RangeWhere(request, result.received))));
  } else if (code == 408 || code == 429 || code >= 500) {
    cause = fmt::format("HTTP {}{}", code, ErrorDetail(result.body, request.secrets));
  } else {
    return Fail(std::move(v), ResponseError(request, result));
  }
  const bool progressed = result.received > attempt.start_received;
  const int failures_in_row = progressed ? 1 : attempt.failures_in_row + 1;
  v.failures_in_row = failures_in_row;
  if (failures_in_row >= retry.max_attempts) {
    return Fail(
        std::move(v),
        absl::UnavailableError(fmt::format(
            "{}{}: giving up after {} attempts ({} in a row without progress); "
            "last cause: {}",
            who, RangeWhere(request, result.received), result.attempts, failures_in_row, cause)));
  }
  v.kind = AttemptVerdict::kRetry;
  v.delay = RetryDelay(retry, v.failures_in_row, result.headers);
  v.cause = std::move(cause);
  return v;
}

}  // namespace dataecho::internal
