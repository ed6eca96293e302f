// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http:// and https:// objects: HEAD for stat, ranged GETs with If-Match.
#include <optional>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "storage/remote_store.h"
#include "storage/uri.h"

namespace dataecho::internal {
namespace {

bool IsEtag(const std::string& version) {
  return version.starts_with('"') || version.starts_with("W/\"");
}

class HttpBackend : public RemoteBackend {
 public:
  absl::StatusOr<HttpRequest> StatRequest(std::string_view uri) override {
    HttpRequest r = RequestFor(uri, std::string(uri));
    r.head = true;
    return r;
  }

  absl::StatusOr<ObjectInfo> ParseStat(std::string_view uri, const HttpResult& head) override {
    std::optional<ObjectInfo> info = InfoFromHead(uri, head, /*last_modified_version=*/true);
    if (!info) {
      return absl::UnimplementedError(
          fmt::format("{}: the server gave no Content-Length, so the object's size is unknown",
                      RedactUri(uri)));
    }
    return *std::move(info);
  }

  absl::StatusOr<HttpRequest> ReadRequest(std::string_view uri,
                                          const std::string& version) override {
    HttpRequest r = RequestFor(uri, std::string(uri));
    // A weak ETag never matches If-Match; it is still compared on responses.
    if (IsEtag(version) && !version.starts_with("W/")) r.headers.push_back("If-Match: " + version);
    return r;
  }

  std::string VersionHeader(const std::string& version) const override {
    return version.empty() || IsEtag(version) ? "etag" : "last-modified";
  }

  absl::StatusOr<std::vector<ObjectInfo>> List(HttpClient&, std::string_view prefix) override {
    return absl::UnimplementedError(
        fmt::format("{}: plain HTTP has no listing; name the objects, or use gs:// or s3://",
                    RedactUri(prefix)));
  }
};

}  // namespace

std::unique_ptr<ObjectStore> NewHttpStore(const ObjectStoreOptions& options) {
  return NewRemoteStore(std::make_shared<HttpClient>(options.http, options.retry),
                        std::make_unique<HttpBackend>());
}

}  // namespace dataecho::internal
