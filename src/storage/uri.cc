// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/uri.h"

#include "absl/status/status.h"
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
    return absl::InvalidArgumentError(fmt::format("{}: no bucket in URI", RedactUrl(uri)));
  }
  BucketKey out;
  out.scheme = std::string(scheme);
  out.bucket = std::string(bucket);
  if (slash != std::string_view::npos) out.key = std::string(rest.substr(slash + 1));
  return out;
}

absl::StatusOr<std::string> LocalPath(std::string_view uri) {
  std::string_view scheme = UriScheme(uri);
  if (scheme.empty()) return std::string(uri);
  if (scheme != "file") {
    return absl::InvalidArgumentError(fmt::format("{}: not a local path", RedactUrl(uri)));
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

std::string RedactUrl(std::string_view url) {
  std::string_view scheme = UriScheme(url);
  if (scheme.empty()) return std::string(url);
  std::string out(url.substr(0, scheme.size() + 3));
  std::string_view rest = url.substr(scheme.size() + 3);
  size_t auth_end = rest.find('/');
  std::string_view authority = rest.substr(0, auth_end);
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  out += authority;
  if (auth_end != std::string_view::npos) {
    std::string_view path = rest.substr(auth_end);
    size_t q = path.find('?');
    out += path.substr(0, q);
    if (q != std::string_view::npos) out += "?...";
  }
  return out;
}

}  // namespace dataecho::internal
