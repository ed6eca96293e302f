// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/local_store.h: the ObjectStore over local files.
//
// Reads with pread(2) into a read-ahead buffer (and asks the kernel to fetch
// the next window with posix_fadvise), so no mmap is needed. URIs are plain
// paths ("data/train-0", "/data/train-0") or file:// URIs
// ("file:///data/train-0"). An object's version is its mtime, inode and size;
// a reader that sees the file change under it returns FAILED_PRECONDITION.
//
//   auto store = dataecho::NewLocalStore();
//   auto files = store->List("/data/mnist/train-");   // recursive, sorted
//
// Errors name the path: NOT_FOUND (no such file), PERMISSION_DENIED,
// INVALID_ARGUMENT (a directory, a bad URI), FAILED_PRECONDITION (a symbolic
// link loop; a file changed under a reader), UNKNOWN (other errno).
//
// Thread safety: the store is thread-safe; see ObjectReader for readers.
#ifndef DATAECHO_STORAGE_LOCAL_STORE_H_
#define DATAECHO_STORAGE_LOCAL_STORE_H_

#include <memory>

#include "dataecho/export.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

DATAECHO_EXPORT std::unique_ptr<ObjectStore> NewLocalStore();

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_LOCAL_STORE_H_
