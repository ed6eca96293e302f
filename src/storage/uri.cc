// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/uri.h"

#include <cctype>

#include "absl/status/status.h"
#include "dataecho/text.h"
#include "fmt/format.h"

namespace dataecho::internal {

std::string_view UriScheme(std::string_view uri) {
  size_t pos = uri.find("://");
  if (pos == std::string_view::npos || pos == 0) return {};
  for (char c : uri.substr(0, pos)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.';
    if (!ok) return {};
  }
  return uri.substr(0, pos);
}

absl::StatusOr<BucketKey> SplitBucketUri(std::string_view uri) {
  std::string_view scheme = UriScheme(uri);
  if (scheme.empty()) return absl::InvalidArgumentError(fmt::format("{}: not a URI", uri));
  std::string_view rest = uri.substr(scheme.size() + 3);
  size_t slash = rest.find('/');
  std::string_view bucket = rest.substr(0, slash);
  if (bucket.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: no bucket in URI", RedactUri(uri)));
  }
  BucketKey out;
  out.scheme = std::string(scheme);
  out.bucket = std::string(bucket);
  if (slash != std::string_view::npos) out.key = std::string(rest.substr(slash + 1));
  return out;
}

absl::StatusOr<BucketKey> SplitObjectUri(std::string_view uri, std::string_view noun) {
  absl::StatusOr<BucketKey> bk = SplitBucketUri(uri);
  if (bk.ok() && bk->key.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: no {}", RedactUri(uri), noun));
  }
  return bk;
}

absl::StatusOr<std::string> LocalPath(std::string_view uri) {
  std::string_view scheme = UriScheme(uri);
  if (scheme.empty()) return std::string(uri);
  if (scheme != "file") {
    return absl::InvalidArgumentError(fmt::format("{}: not a local path", RedactUri(uri)));
  }
  std::string_view rest = uri.substr(7);
  if (rest.starts_with("localhost/")) rest.remove_prefix(9);
  if (!rest.starts_with('/')) {
    return absl::InvalidArgumentError(
        fmt::format("{}: file:// URIs must be file:///absolute/path", uri));
  }
  return std::string(rest);
}

std::string PercentEncode(std::string_view s, bool keep_slash) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string EncodeKeyPath(std::string_view key) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    std::string_view segment = key.substr(start, slash - start);
    if (segment == ".") {
      out += "%2E";
    } else if (segment == "..") {
      out += "%2E%2E";
    } else {
      out += PercentEncode(segment);
    }
    if (slash == std::string_view::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

namespace {

bool IsSecretParameter(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::string_view kNames[] = {"x-amz-signature",
                                                "x-amz-credential",
                                                "x-amz-security-token",
                                                "x-goog-signature",
                                                "x-goog-credential",
                                                "signature",
                                                "sig",
                                                "token",
                                                "access_token",
                                                "id_token",
                                                "refresh_token",
                                                "key",
                                                "apikey",
                                                "api_key",
                                                "password",
                                                "passwd",
                                                "pwd",
                                                "secret",
                                                "client_secret",
                                                "auth",
                                                "authorization",
                                                "credential",
                                                "credentials"};
  for (std::string_view n : kNames) {
    if (lower == n) return true;
  }
  return lower.find("token") != std::string::npos || lower.find("secret") != std::string::npos ||
         lower.find("signature") != std::string::npos ||
         lower.find("password") != std::string::npos;
}

// The query `q` (without '?', may hold a '#fragment') with secret values redacted.
std::string RedactQuery(std::string_view q) {
  std::string out;
  size_t hash = q.find('#');
  std::string_view fragment = hash == std::string_view::npos ? "" : q.substr(hash);
  q = q.substr(0, hash);
  size_t start = 0;
  while (start <= q.size()) {
    size_t amp = q.find('&', start);
    std::string_view param = q.substr(start, amp - start);
    if (start > 0) out += '&';
    size_t eq = param.find('=');
    std::string_view name = param.substr(0, eq);
    if (eq != std::string_view::npos && IsSecretParameter(name)) {
      out += name;
      out += "=[redacted]";
    } else {
      out += param;
    }
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  out += fragment;
  return out;
}

}  // namespace

size_t GlobStart(std::string_view pattern) {
  std::string_view scheme = UriScheme(pattern);
  size_t from = 0;
  if (scheme == "file") {
    from = scheme.size() + 3;
  } else if (scheme == "s3" || scheme == "gs") {
    size_t slash = pattern.find('/', scheme.size() + 3);
    if (slash == std::string_view::npos) return std::string_view::npos;
    from = slash + 1;
  } else if (!scheme.empty()) {
    return std::string_view::npos;
  }
  for (size_t i = from; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;  // the next character is literal
    } else if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[') {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string GlobUnescape(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size() &&
        std::string_view("*?[]\\").find(pattern[i + 1]) != std::string_view::npos) {
      ++i;
    }
    out.push_back(pattern[i]);
  }
  return out;
}

}  // namespace dataecho::internal

namespace dataecho {

std::string RedactUri(std::string_view url) {
  std::string_view scheme = internal::UriScheme(url);
  if (scheme.empty()) return TerminalSafe(url);
  std::string out(url.substr(0, scheme.size() + 3));
  std::string_view rest = url.substr(scheme.size() + 3);
  size_t auth_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, auth_end);
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  out += authority;
  if (auth_end != std::string_view::npos) {
    std::string_view path = rest.substr(auth_end);
    size_t q = path.find('?');
    out += path.substr(0, q);
    if (q != std::string_view::npos) {
      out += '?';
      out += internal::RedactQuery(path.substr(q + 1));
    }
  }
  return TerminalSafe(out);
}

}  // namespace dataecho
