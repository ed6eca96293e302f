// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// OpenObjectStore(): one store that hands each URI to the store of its scheme.
#include "dataecho/storage/object_store.h"

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/storage/local_store.h"
#include "fmt/format.h"
#include "storage/remote_stores.h"
#include "storage/uri.h"

namespace dataecho {
namespace {

class SchemeStore : public ObjectStore {
 public:
  explicit SchemeStore(const ObjectStoreOptions& options)
      : options_(options), local_(NewLocalStore()) {}

  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override {
    absl::StatusOr<ObjectStore*> store = StoreFor(uri);
    if (!store.ok()) return store.status();
    return (*store)->Stat(uri);
  }

  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset,
                                   uint64_t length) override {
    absl::StatusOr<ObjectStore*> store = StoreFor(uri);
    if (!store.ok()) return store.status();
    return (*store)->ReadRange(uri, offset, length);
  }

  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions& options) override {
    absl::StatusOr<ObjectStore*> store = StoreFor(uri);
    if (!store.ok()) return store.status();
    return (*store)->Open(uri, options);
  }

  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) override {
    absl::StatusOr<ObjectStore*> store = StoreFor(prefix);
    if (!store.ok()) return store.status();
    return (*store)->List(prefix);
  }

 private:
  absl::StatusOr<ObjectStore*> StoreFor(std::string_view uri) {
    std::string_view scheme = internal::UriScheme(uri);
    if (scheme.empty() || scheme == "file") return local_.get();
    absl::MutexLock lock(&mu_);
    if (scheme == "http" || scheme == "https") {
      if (!http_) http_ = internal::NewHttpStore(options_);
      return http_.get();
    }
    if (scheme == "gs") {
      if (!gcs_) gcs_ = internal::NewGcsStore(options_);
      if (!gcs_) return absl::UnimplementedError("gs:// is not available yet");
      return gcs_.get();
    }
    if (scheme == "s3") {
      if (!s3_) s3_ = internal::NewS3Store(options_);
      if (!s3_) return absl::UnimplementedError("s3:// is not available yet");
      return s3_.get();
    }
    return UnknownScheme(uri, scheme);
  }

  static absl::Status UnknownScheme(std::string_view uri, std::string_view scheme) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: unsupported URI scheme '{}' (expected a path, file://, http://, https://, gs:// or "
        "s3://)",
        internal::RedactUrl(uri), scheme));
  }

  const ObjectStoreOptions options_;
  const std::unique_ptr<ObjectStore> local_;
  absl::Mutex mu_;
  std::unique_ptr<ObjectStore> http_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ObjectStore> gcs_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ObjectStore> s3_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<ObjectStore> OpenObjectStore(const ObjectStoreOptions& options) {
  return std::make_unique<SchemeStore>(options);
}

}  // namespace dataecho
