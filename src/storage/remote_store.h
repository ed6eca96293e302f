// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// remote_store.h: the ObjectStore shared by http(s)://, gs:// and s3://, and
// the constructors of those stores (the object store's table of schemes,
// object_store.cc, names them). Internal.
//
// A backend says how to name, stat, read and list objects of one service;
// the store does the rest over an HttpClient: sequential readers that keep
// several ranged GETs in flight, ranged reads, version pinning.
//
//   class MyBackend : public RemoteBackend { ... };
//   std::unique_ptr<ObjectStore> store = NewRemoteStore(
//       std::make_shared<HttpClient>(options.http, options.retry), std::make_unique<MyBackend>());
#ifndef DATAECHO_SRC_STORAGE_REMOTE_STORE_H_
#define DATAECHO_SRC_STORAGE_REMOTE_STORE_H_

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/storage/object_store.h"
#include "storage/http_client.h"
#include "storage/uri.h"

namespace dataecho::internal {

class RemoteBackend {
 public:
  virtual ~RemoteBackend() = default;

  // The request whose response describes the object (a HEAD, or a metadata GET).
  virtual absl::StatusOr<HttpRequest> StatRequest(std::string_view uri) = 0;
  // The object described by the result of a successful StatRequest job.
  virtual absl::StatusOr<ObjectInfo> ParseStat(std::string_view uri, const HttpResult& result) = 0;
  // A GET of the object's bytes; when `version` is not empty, the request
  // asks the server to refuse a different version (If-Match, ...).
  virtual absl::StatusOr<HttpRequest> ReadRequest(std::string_view uri,
                                                  const std::string& version) = 0;
  // The response header that carries `version` (compared on every response).
  virtual std::string VersionHeader(const std::string& version) const = 0;
  virtual absl::StatusOr<std::vector<ObjectInfo>> List(HttpClient& client,
                                                       std::string_view prefix) = 0;
};

std::unique_ptr<ObjectStore> NewRemoteStore(std::shared_ptr<HttpClient> client,
                                            std::unique_ptr<RemoteBackend> backend);

// The stores of http:// and https://, gs:// (gcs_store.cc) and s3://
// (s3_store.cc).
std::unique_ptr<ObjectStore> NewHttpStore(const ObjectStoreOptions& options);
std::unique_ptr<ObjectStore> NewGcsStore(const ObjectStoreOptions& options);
std::unique_ptr<ObjectStore> NewS3Store(const ObjectStoreOptions& options);

// Helpers of the backends.

// `option` if not empty, else the first of the environment variables `vars`
// that is set and not empty, else "".
std::string OptionOrEnv(const std::string& option, std::initializer_list<const char*> vars);

// The object a HEAD response describes: its size from Content-Length and its
// version from ETag (else, with `last_modified_version`, Last-Modified).
// nullopt without a valid Content-Length.
std::optional<ObjectInfo> InfoFromHead(std::string_view uri, const HttpResult& head,
                                       bool last_modified_version);

// One page of a listing, as parsed from the service's answer.
struct ListPage {
  std::vector<ObjectInfo> objects;
  std::string next_token;  // empty on the last page
};

// An S3 ListObjectsV2 page (XML) of `bucket`; DATA_LOSS for a body that is
// not one (an HTML page, an entry without a size, truncated without a token).
absl::StatusOr<ListPage> ParseS3ListPage(std::string_view xml, std::string_view bucket);
// A Cloud Storage objects.list page (JSON) of `bucket`; DATA_LOSS likewise.
absl::StatusOr<ListPage> ParseGcsListPage(std::string_view json, std::string_view bucket);

// Pages at most in one listing (x the page size, objects).
inline constexpr int kMaxListPages = 100000;

// Every page of a listing: fetch(token, page) from token "" on, until a page
// without a next token. A listing that would never end or that repeats itself
// is refused, naming `where` (the bucket and prefix) and the page: a token
// seen before, a page with a next token but no objects, an object listed
// twice (DATA_LOSS), more than kMaxListPages pages (RESOURCE_EXHAUSTED).
using FetchPage = std::function<absl::StatusOr<ListPage>(const std::string& token, int page)>;
absl::StatusOr<std::vector<ObjectInfo>> ListAllPages(std::string_view where,
                                                     const FetchPage& fetch);
// The listing of `prefix` (a gs:// or s3:// URI) through ListAllPages: each
// page is page_request(its bucket and key, the token after the last page, ""
// for the first) run on `client`, its body read by parse(body, bucket).
using PageRequest = std::function<HttpRequest(const BucketKey& bk, const std::string& token)>;
using ParsePage = absl::StatusOr<ListPage> (*)(std::string_view body, std::string_view bucket);
absl::StatusOr<std::vector<ObjectInfo>> ListBucket(HttpClient& client, std::string_view prefix,
                                                   const PageRequest& page_request,
                                                   ParsePage parse);
// A request for `url` whose errors name `uri`, redacted (RedactUri).
HttpRequest RequestFor(std::string_view uri, std::string url);

// `where` for the listing of `prefix` (a gs:// or s3:// URI split into `bk`):
// "listing of bucket 'b', prefix 'p' (<redacted uri>)".
std::string ListingWhere(const BucketKey& bk, std::string_view prefix);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_REMOTE_STORE_H_
