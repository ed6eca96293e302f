// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// support/checkpoint_check.h: what the checkpoint tests of the stages and the
// record sources share beyond CheckResumes() (resume_check.h): small TFRecord
// files (with their indexes), a store and an interleave of them.
#ifndef DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_
#define DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/formats/tfrecord.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "support/resume_check.h"
#include "support/temp_files.h"

namespace dataecho::testing {

inline std::vector<std::string> WriteTFRecordFiles(const TempDir& dir, int files, int records) {
  std::vector<std::string> paths;
  for (int f = 0; f < files; ++f) {
    std::string bytes;
    for (int r = 0; r < records; ++r) {
      AppendTFRecord(&bytes, fmt::format("file {} record {} {}", f, r, std::string(r % 7, 'x')));
    }
    const std::string path = dir.File(fmt::format("part-{}.tfrecord", f));
    WriteFileOrDie(path, bytes);
    paths.push_back(path);
  }
  return paths;
}

// The payload of record `i` of file `f` of WriteIndexedTFRecordFiles():
// "f<f>-r<i>", padded with '.' to a length that varies from record to record.
inline std::string IndexedPayload(uint64_t f, uint64_t i) {
  std::string s = fmt::format("f{}-r{}", f, i);
  s.append((i * 7 + f) % 23, '.');
  return s;
}

// counts.size() TFRecord files, DIR/part-<ff>.tfrecord, the f-th holding
// counts[f] records IndexedPayload(f, i); their paths. `*indexes` (if given)
// gets each file's true record offsets.
inline std::vector<std::string> WriteIndexedTFRecordFiles(
    const TempDir& dir, const std::vector<uint64_t>& counts,
    std::vector<TFRecordIndex>* indexes = nullptr) {
  std::vector<std::string> paths;
  for (uint64_t f = 0; f < counts.size(); ++f) {
    std::string bytes;
    TFRecordIndex index;
    for (uint64_t i = 0; i < counts[f]; ++i) {
      index.offsets.push_back(bytes.size());
      AppendTFRecord(&bytes, IndexedPayload(f, i));
    }
    index.offsets.push_back(bytes.size());
    paths.push_back(dir.File(fmt::format("part-{:02}.tfrecord", f)));
    WriteFileOrDie(paths.back(), bytes);
    if (indexes != nullptr) indexes->push_back(std::move(index));
  }
  return paths;
}

inline std::shared_ptr<ObjectStore> Store() { return OpenObjectStore(); }

// The records of `paths`, read by an Interleave of one TFRecord source a file.
inline Pipeline<Record> InterleavedFiles(const std::vector<std::string>& paths, int64_t cycle,
                                         int64_t block) {
  return FromVector(paths).Interleave(
      [](std::string f) { return From(MakeTFRecordSource(Store(), {std::move(f)})); },
      {.cycle_length = cycle, .block_length = block});
}

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_
