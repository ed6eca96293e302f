// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// gs://bucket/key through the Cloud Storage JSON API: object metadata for
// stat, media downloads (alt=media) pinned with ifGenerationMatch, listings
// with page tokens.
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "internal/json_reader.h"
#include "storage/remote_store.h"
#include "storage/uri.h"

namespace dataecho::internal {
namespace {

absl::StatusOr<ObjectInfo> Info(std::string uri, const JsonValue& json) {
  ObjectInfo info;
  info.uri = std::move(uri);
  if (!absl::SimpleAtoi(json.String("size"), &info.size)) {
    return absl::DataLossError(
        fmt::format("{}: object metadata without a size", RedactUri(info.uri)));
  }
  info.version = json.String("generation");
  return info;
}

class GcsBackend : public RemoteBackend {
 public:
  explicit GcsBackend(const GcsOptions& options) {
    endpoint_ = OptionOrEnv(options.endpoint, {"STORAGE_EMULATOR_HOST"});
    if (endpoint_.empty()) endpoint_ = "https://storage.googleapis.com";
    if (UriScheme(endpoint_).empty()) endpoint_ = "http://" + endpoint_;
    while (endpoint_.ends_with('/')) endpoint_.pop_back();
    token_ = OptionOrEnv(options.access_token, {"GOOGLE_OAUTH_ACCESS_TOKEN"});
  }

  absl::StatusOr<HttpRequest> StatRequest(std::string_view uri) override {
    DATAECHO_ASSIGN_OR_RETURN(BucketKey bk, SplitObjectUri(uri, "object name"));
    return Request(uri, ObjectUrl(bk));
  }

  absl::StatusOr<ObjectInfo> ParseStat(std::string_view uri, const HttpResult& result) override {
    absl::StatusOr<JsonValue> json = ParseJson(result.body);
    if (!json.ok()) {
      return absl::DataLossError(fmt::format("{}: bad object metadata: {}", RedactUri(uri),
                                             std::string(json.status().message())));
    }
    return Info(std::string(uri), *json);
  }

  absl::StatusOr<HttpRequest> ReadRequest(std::string_view uri,
                                          const std::string& version) override {
    DATAECHO_ASSIGN_OR_RETURN(BucketKey bk, SplitObjectUri(uri, "object name"));
    std::string url = ObjectUrl(bk) + "?alt=media";
    if (!version.empty()) url += "&ifGenerationMatch=" + version;
    return Request(uri, url);
  }

  std::string VersionHeader(const std::string&) const override { return "x-goog-generation"; }

  absl::StatusOr<std::vector<ObjectInfo>> List(HttpClient& client,
                                               std::string_view prefix) override {
    return ListBucket(
        client, prefix,
        [&](const BucketKey& bk, const std::string& token) {
          std::string url = fmt::format("{}/storage/v1/b/{}/o?prefix={}", endpoint_,
                                        PercentEncode(bk.bucket), PercentEncode(bk.key));
          if (!token.empty()) url += "&pageToken=" + PercentEncode(token);
          return Request(prefix, url);
        },
        ParseGcsListPage);
  }

 private:
  std::string ObjectUrl(const BucketKey& bk) const {
    // The name is one path segment ('/' encoded too); "." and ".." as
    // %2E... so that nothing resolves them as dot segments.
    std::string name = PercentEncode(bk.key);
    if (name == "." || name == "..") name = EncodeKeyPath(bk.key);
    return fmt::format("{}/storage/v1/b/{}/o/{}", endpoint_, PercentEncode(bk.bucket), name);
  }
  HttpRequest Request(std::string_view uri, std::string url) const {
    HttpRequest r = RequestFor(uri, std::move(url));
    if (!token_.empty()) r.AddSecretHeader("Authorization: Bearer ", token_);
    return r;
  }
  std::string endpoint_;
  std::string token_;
};

}  // namespace

absl::StatusOr<ListPage> ParseGcsListPage(std::string_view json_text, std::string_view bucket) {
  absl::StatusOr<JsonValue> json = ParseJson(json_text);
  if (!json.ok()) {
    return absl::DataLossError(
        fmt::format("not a Cloud Storage listing: {}", std::string(json.status().message())));
  }
  ListPage page;
  if (const JsonValue* items = json->Find("items")) {
    for (const JsonValue& item : items->items) {
      DATAECHO_ASSIGN_OR_RETURN(ObjectInfo info,
                                Info(fmt::format("gs://{}/{}", bucket, item.String("name")), item));
      page.objects.push_back(std::move(info));
    }
  }
  page.next_token = json->String("nextPageToken");
  return page;
}

std::unique_ptr<ObjectStore> NewGcsStore(const ObjectStoreOptions& options) {
  return NewRemoteStore(std::make_shared<HttpClient>(options.http, options.retry),
                        std::make_unique<GcsBackend>(options.gcs));
}

}  // namespace dataecho::internal
