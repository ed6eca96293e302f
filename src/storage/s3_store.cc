// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// s3://bucket/key: HEAD for stat, ranged GETs pinned with If-Match,
// ListObjectsV2 with continuation tokens, requests signed with AWS SigV4 by
// libcurl (CURLOPT_AWS_SIGV4). With an endpoint (an emulator, MinIO, ...)
// requests are path-style: ENDPOINT/bucket/key.
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "dataecho/status_macros.h"
#include "dataecho/text.h"
#include "fmt/format.h"
#include "storage/remote_store.h"
#include "storage/uri.h"

namespace dataecho::internal {
namespace {

std::string XmlUnescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) {
      out.push_back(s[i]);
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out.push_back('&');
    else if (ent == "lt")
      out.push_back('<');
    else if (ent == "gt")
      out.push_back('>');
    else if (ent == "quot")
      out.push_back('"');
    else if (ent == "apos")
      out.push_back('\'');
    else if (uint32_t code = 0;
             ent.starts_with("#x") && absl::SimpleHexAtoi(std::string(ent.substr(2)), &code))
      out.push_back(static_cast<char>(code));  // (keys are bytes; non-ASCII comes as UTF-8)
    else if (ent.starts_with("#") && absl::SimpleAtoi(std::string(ent.substr(1)), &code))
      out.push_back(static_cast<char>(code));
    else
      out.append(s.substr(i, semi - i + 1));
    i = semi;
  }
  return out;
}

// The text of the first <tag>...</tag> in `xml` at or after `*pos`; moves
// *pos past it. Empty optional-like: returns false if absent.
bool NextTag(std::string_view xml, std::string_view tag, size_t* pos, std::string_view* out) {
  std::string open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
  size_t a = xml.find(open, *pos);
  if (a == std::string_view::npos) return false;
  size_t b = xml.find(close, a);
  if (b == std::string_view::npos) return false;
  *out = xml.substr(a + open.size(), b - a - open.size());
  *pos = b + close.size();
  return true;
}

std::string Tag(std::string_view xml, std::string_view tag) {
  size_t pos = 0;
  std::string_view v;
  return NextTag(xml, tag, &pos, &v) ? XmlUnescape(v) : "";
}

class S3Backend : public RemoteBackend {
 public:
  explicit S3Backend(const S3Options& o)
      : endpoint_(OptionOrEnv(o.endpoint, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"})),
        region_(OptionOrEnv(o.region, {"AWS_REGION", "AWS_DEFAULT_REGION"})),
        key_id_(OptionOrEnv(o.access_key_id, {"AWS_ACCESS_KEY_ID"})),
        secret_(OptionOrEnv(o.secret_access_key, {"AWS_SECRET_ACCESS_KEY"})),
        token_(OptionOrEnv(o.session_token, {"AWS_SESSION_TOKEN"})),
        page_size_(o.list_page_size) {
    while (endpoint_.ends_with('/')) endpoint_.pop_back();
    if (region_.empty()) region_ = "us-east-1";
  }

  absl::StatusOr<HttpRequest> StatRequest(std::string_view uri) override {
    DATAECHO_ASSIGN_OR_RETURN(BucketKey bk, SplitObjectUri(uri, "object key"));
    HttpRequest r = Request(uri, ObjectUrl(bk));
    r.head = true;
    return r;
  }

  absl::StatusOr<ObjectInfo> ParseStat(std::string_view uri, const HttpResult& head) override {
    std::optional<ObjectInfo> info = InfoFromHead(uri, head, /*last_modified_version=*/false);
    if (!info)
      return absl::DataLossError(fmt::format("{}: HEAD gave no Content-Length", RedactUri(uri)));
    return *std::move(info);
  }

  absl::StatusOr<HttpRequest> ReadRequest(std::string_view uri,
                                          const std::string& version) override {
    DATAECHO_ASSIGN_OR_RETURN(BucketKey bk, SplitObjectUri(uri, "object key"));
    HttpRequest r = Request(uri, ObjectUrl(bk));
    if (!version.empty()) r.headers.push_back("If-Match: " + version);
    return r;
  }

  std::string VersionHeader(const std::string&) const override { return "etag"; }

  absl::StatusOr<std::vector<ObjectInfo>> List(HttpClient& client,
                                               std::string_view prefix) override {
    return ListBucket(
        client, prefix,
        [&](const BucketKey& bk, const std::string& token) {
          // Query parameters in the sorted, fully escaped form SigV4 signs.
          std::string query;
          if (!token.empty()) query += "continuation-token=" + PercentEncode(token) + "&";
          query +=
              fmt::format("list-type=2&max-keys={}&prefix={}", page_size_, PercentEncode(bk.key));
          return Request(prefix, BucketUrl(bk.bucket) + "?" + query);
        },
        ParseS3ListPage);
  }

 private:
  std::string BucketUrl(const std::string& bucket) const {
    if (!endpoint_.empty()) return fmt::format("{}/{}", endpoint_, PercentEncode(bucket));
    return fmt::format("https://{}.s3.{}.amazonaws.com/", bucket, region_);
  }
  std::string ObjectUrl(const BucketKey& bk) const {
    std::string base = BucketUrl(bk.bucket);
    if (!base.ends_with('/')) base += '/';
    return base + EncodeKeyPath(bk.key);
  }
  HttpRequest Request(std::string_view uri, std::string url) const {
    HttpRequest r = RequestFor(uri, std::move(url));
    if (!key_id_.empty() && !secret_.empty()) {
      r.aws_sigv4 = fmt::format("aws:amz:{}:s3", region_);
      r.userpwd = key_id_ + ":" + secret_;
      r.headers.push_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
      r.secrets = {secret_, key_id_};
      if (!token_.empty()) r.AddSecretHeader("x-amz-security-token: ", token_);
    }
    return r;
  }

  std::string endpoint_;
  std::string region_;
  std::string key_id_;
  std::string secret_;
  std::string token_;
  int page_size_;
};

}  // namespace

absl::StatusOr<ListPage> ParseS3ListPage(std::string_view xml, std::string_view bucket) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    return absl::DataLossError(
        fmt::format("not an S3 listing (no <ListBucketResult>; the answer starts with '{}')",
                    TerminalSafe(xml.substr(0, 40))));
  }
  ListPage page;
  size_t pos = 0;
  std::string_view entry;
  while (NextTag(xml, "Contents", &pos, &entry)) {
    ObjectInfo info;
    info.uri = fmt::format("s3://{}/{}", bucket, Tag(entry, "Key"));
    if (!absl::SimpleAtoi(Tag(entry, "Size"), &info.size)) {
      return absl::DataLossError(
          fmt::format("listing entry {} without a size", RedactUri(info.uri)));
    }
    info.version = Tag(entry, "ETag");
    page.objects.push_back(std::move(info));
  }
  if (Tag(xml, "IsTruncated") == "true") {
    page.next_token = Tag(xml, "NextContinuationToken");
    if (page.next_token.empty()) {
      return absl::DataLossError("truncated listing without a continuation token");
    }
  }
  return page;
}

std::unique_ptr<ObjectStore> NewS3Store(const ObjectStoreOptions& options) {
  return NewRemoteStore(std::make_shared<HttpClient>(options.http, options.retry),
                        std::make_unique<S3Backend>(options.s3));
}

}  // namespace dataecho::internal
