// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/tfrecord_length.h: len() of a TFRecord source (from_tfrecord):
// a deferred Length (length.h) that, when len() asks, counts the records of
// each file by reading it once (ScanTFRecordIndex), cached in this process
// per file version (the store's Stat(): size and ETag or mtime), so a
// DataLoader's len() and every later epoch's pipeline, and workers forked
// after it, read nothing again until a file changes.
#ifndef DATAECHO_PYTHON_SRC_TFRECORD_LENGTH_H_
#define DATAECHO_PYTHON_SRC_TFRECORD_LENGTH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/object_store.h"
#include "length.h"

namespace dataecho::python {

// The records of `uri` (a counted pass, cached as above).
absl::StatusOr<int64_t> CountTFRecords(ObjectStore& store, const std::string& uri,
                                       const TFRecordReaderOptions& options);

// Deferred: the records of `uris` (raises the store's error, naming the file,
// when computed).
Length TFRecordLength(std::shared_ptr<ObjectStore> store, std::vector<std::string> uris,
                      TFRecordReaderOptions options);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_TFRECORD_LENGTH_H_
