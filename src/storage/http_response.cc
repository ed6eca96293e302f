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

}  // namespace dataecho::internal
