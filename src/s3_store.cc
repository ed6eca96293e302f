// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "absl/status/status.h"
#include "fmt/format.h"
#include "remote_store.h"
#include "remote_stores.h"

namespace dataecho::internal {

std::unique_ptr<ObjectStore> NewS3Store(const ObjectStoreOptions& options) {
  (void)options;
  return nullptr;
}

}  // namespace dataecho::internal
