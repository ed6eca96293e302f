// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// support/checkpoint_check.h: what the checkpoint tests of the stages and the
// record sources share beyond CheckResumes() (resume_check.h): small TFRecord
// files and a store.
#ifndef DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_
#define DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_

#include <memory>
#include <string>
#include <vector>

#include "dataecho/formats/tfrecord.h"
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

inline std::shared_ptr<ObjectStore> Store() { return OpenObjectStore(); }

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_
