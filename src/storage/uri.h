// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// uri.h: splitting and escaping the URIs the object stores accept. Internal.
#ifndef DATAECHO_SRC_STORAGE_URI_H_
#define DATAECHO_SRC_STORAGE_URI_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dataecho::internal {

// "s3" for "s3://b/k", "file" for "file:///x", "" for a plain path.
std::string_view UriScheme(std::string_view uri);

// "scheme://authority/rest" split into its three parts (rest without the
// leading '/'). INVALID_ARGUMENT if `uri` has no "://" or no authority.
struct BucketKey {
  std::string scheme;
  std::string bucket;
  std::string key;
};
absl::StatusOr<BucketKey> SplitBucketUri(std::string_view uri);

// The local path of a plain path or a file:// URI (file:///x or
// file://localhost/x). INVALID_ARGUMENT for another host.
absl::StatusOr<std::string> LocalPath(std::string_view uri);

// `s` percent-encoded (RFC 3986 unreserved characters kept); with
// keep_slash, '/' is kept too.
std::string PercentEncode(std::string_view s, bool keep_slash = false);

// `url` safe to put into an error: no user:password, no query string.
std::string RedactUrl(std::string_view url);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_URI_H_
