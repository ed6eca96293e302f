// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// uri.h: splitting and escaping the URIs the object stores accept. Internal.
#ifndef DATAECHO_SRC_STORAGE_URI_H_
#define DATAECHO_SRC_STORAGE_URI_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
// RedactUri, the one redaction of a URI for messages, is public: object_store.h.
// (So is TerminalSafe, the one escaping of a name for messages: text.h.)
#include "dataecho/storage/object_store.h"

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
// SplitBucketUri for a URI that must name one object: INVALID_ARGUMENT
// "<uri>: no <noun>" when the key is empty ("object name", "object key").
absl::StatusOr<BucketKey> SplitObjectUri(std::string_view uri, std::string_view noun);

// The local path of a plain path or a file:// URI (file:///x or
// file://localhost/x). INVALID_ARGUMENT for another host.
absl::StatusOr<std::string> LocalPath(std::string_view uri);

// `s` percent-encoded (RFC 3986 unreserved characters kept); with
// keep_slash, '/' is kept too.
std::string PercentEncode(std::string_view s, bool keep_slash = false);

// `key` (an S3 key or a path under a base URL) as a URL path: percent-encoded
// with '/' kept, and every "." or ".." segment encoded too ("%2E", "%2E%2E")
// so that nothing between here and the server (libcurl, a proxy) can resolve
// it as a dot segment: the request path is always base + "/" + this.
std::string EncodeKeyPath(std::string_view key);

// Where the glob part of `pattern` starts: the first '*', '?' or '[' that is
// not escaped by a '\', looking only where a listing can expand it (the path
// of a plain path or file:// URI, the key of gs:// and s3://); npos when
// `pattern` is not a glob (http(s):// URLs never are: '?' starts their query).
size_t GlobStart(std::string_view pattern);

// `pattern` with the '\' escapes removed ("a\[1\]" is "a[1]").
std::string GlobUnescape(std::string_view pattern);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_URI_H_
