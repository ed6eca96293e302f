// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// OpenObjectStore(): one store that hands each URI to the store of its scheme.
#include "dataecho/storage/object_store.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/local_store.h"
#include "fmt/format.h"
#include "storage/remote_store.h"
#include "storage/uri.h"

namespace dataecho {
namespace {

// The backends, by URI scheme. A new backend adds its constructor here (and
// to the message of UnknownScheme). An explicit table, not registrars in the
// backends' files: the library is also a static archive, where the linker
// drops an object file nothing refers to, with its registrar.
struct Backend {
  std::vector<std::string_view> schemes;  // "" is a plain path
  std::unique_ptr<ObjectStore> (*open)(const ObjectStoreOptions& options);
};

std::unique_ptr<ObjectStore> OpenLocal(const ObjectStoreOptions&) { return NewLocalStore(); }

const std::vector<Backend>& Backends() {
  static const std::vector<Backend>* const backends = new std::vector<Backend>{
      {{"", "file"}, &OpenLocal},
      {{"http", "https"}, &internal::NewHttpStore},
      {{"gs"}, &internal::NewGcsStore},
      {{"s3"}, &internal::NewS3Store},
  };
  return *backends;
}

// One store that hands each URI to the store of its scheme, opened on first
// use and kept.
class SchemeStore : public ObjectStore {
 public:
  explicit SchemeStore(const ObjectStoreOptions& options)
      : options_(options), stores_(Backends().size()) {}

  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override {
    DATAECHO_ASSIGN_OR_RETURN(auto* store, StoreFor(uri));
    return store->Stat(uri);
  }

  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset,
                                   uint64_t length) override {
    DATAECHO_ASSIGN_OR_RETURN(auto* store, StoreFor(uri));
    return store->ReadRange(uri, offset, length);
  }

  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions& options) override {
    DATAECHO_ASSIGN_OR_RETURN(auto* store, StoreFor(uri));
    return store->Open(uri, options);
  }

  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) override {
    DATAECHO_ASSIGN_OR_RETURN(auto* store, StoreFor(prefix));
    return store->List(prefix);
  }

 private:
  absl::StatusOr<ObjectStore*> StoreFor(std::string_view uri) {
    const std::string_view scheme = internal::UriScheme(uri);
    const std::vector<Backend>& backends = Backends();
    for (size_t i = 0; i < backends.size(); ++i) {
      const Backend& backend = backends[i];
      if (std::find(backend.schemes.begin(), backend.schemes.end(), scheme) ==
          backend.schemes.end()) {
        continue;
      }
      // A mutex, not a once flag: absl::call_once is invisible to TSan with
      // an uninstrumented Abseil (cmake/tsan_absl_mutex.cc covers Mutex only).
      absl::MutexLock lock(&mu_);
      std::unique_ptr<ObjectStore>& store = stores_[i];
      if (store == nullptr) store = backend.open(options_);
      return store.get();
    }
    return UnknownScheme(uri, scheme);
  }

  static absl::Status UnknownScheme(std::string_view uri, std::string_view scheme) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: unsupported URI scheme '{}' (expected a path, file://, http://, https://, gs:// or "
        "s3://)",
        RedactUri(uri), scheme));
  }

  const ObjectStoreOptions options_;
  absl::Mutex mu_;
  // One per backend, in the table's order; opened on first use.
  std::vector<std::unique_ptr<ObjectStore>> stores_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<ObjectStore> OpenObjectStore(const ObjectStoreOptions& options) {
  return std::make_unique<SchemeStore>(options);
}

}  // namespace dataecho
