// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Placeholder network stores: every call is UNIMPLEMENTED until the HTTP
// client lands.
#include "absl/status/status.h"
#include "fmt/format.h"
#include "remote_stores.h"
#include "uri.h"

namespace dataecho::internal {
namespace {

class UnimplementedStore : public ObjectStore {
 public:
  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override { return Error(uri); }
  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t, uint64_t) override {
    return Error(uri);
  }
  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions&) override {
    return Error(uri);
  }
  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view uri) override {
    return Error(uri);
  }

 private:
  static absl::Status Error(std::string_view uri) {
    return absl::UnimplementedError(
        fmt::format("{}: remote object stores are not available yet", RedactUrl(uri)));
  }
};

}  // namespace

std::unique_ptr<ObjectStore> NewHttpStore(const ObjectStoreOptions&) {
  return std::make_unique<UnimplementedStore>();
}
std::unique_ptr<ObjectStore> NewGcsStore(const ObjectStoreOptions&) {
  return std::make_unique<UnimplementedStore>();
}
std::unique_ptr<ObjectStore> NewS3Store(const ObjectStoreOptions&) {
  return std::make_unique<UnimplementedStore>();
}

}  // namespace dataecho::internal
