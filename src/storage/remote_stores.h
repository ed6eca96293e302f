// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// remote_stores.h: constructors of the network stores OpenObjectStore()
// dispatches to. Internal.
#ifndef DATAECHO_SRC_STORAGE_REMOTE_STORES_H_
#define DATAECHO_SRC_STORAGE_REMOTE_STORES_H_

#include <memory>

#include "dataecho/storage/object_store.h"

namespace dataecho::internal {

std::unique_ptr<ObjectStore> NewHttpStore(const ObjectStoreOptions& options);
std::unique_ptr<ObjectStore> NewGcsStore(const ObjectStoreOptions& options);
std::unique_ptr<ObjectStore> NewS3Store(const ObjectStoreOptions& options);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_REMOTE_STORES_H_
