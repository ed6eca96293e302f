// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Replays every committed fuzz corpus input (tests/fuzz/corpus/<format>/)
// through the same code the libFuzzer targets run (fuzz/fuzz_targets.h), in
// every build: seeds, and inputs that once crashed a target (regression_*).
// A crash, a sanitizer report or a spinning reader fails the test.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_targets.h"
#include "fuzz/sizes_target.h"

namespace dataecho {
namespace {

using Target = void (*)(const uint8_t*, size_t);

// Runs `target` on every file of the corpus directory `format`; returns how
// many inputs ran.
int ReplayCorpus(const std::string& format, Target target) {
  const std::filesystem::path dir = std::filesystem::path(DATAECHO_FUZZ_CORPUS_DIR) / format;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  return static_cast<int>(files.size());
}

TEST(FuzzCorpusTest, StateInputs) { EXPECT_GT(ReplayCorpus("state", fuzz::StateTarget), 0); }

TEST(FuzzCorpusTest, TFRecordInputs) {
  EXPECT_GT(ReplayCorpus("tfrecord", fuzz::TFRecordTarget), 0);
}

TEST(FuzzCorpusTest, CheckpointInputs) {
  EXPECT_GT(ReplayCorpus("checkpoint", fuzz::CheckpointTarget), 0);
}

TEST(FuzzCorpusTest, IdxInputs) { EXPECT_GT(ReplayCorpus("idx", fuzz::IdxTarget), 0); }

TEST(FuzzCorpusTest, JpegInputs) { EXPECT_GT(ReplayCorpus("jpeg", fuzz::JpegTarget), 0); }

TEST(FuzzCorpusTest, SizesInputs) { EXPECT_GT(ReplayCorpus("sizes", fuzz::SizesTarget), 0); }

TEST(FuzzCorpusTest, UriInputs) { EXPECT_GT(ReplayCorpus("uri", fuzz::UriTarget), 0); }

TEST(FuzzCorpusTest, S3ListingInputs) {
  EXPECT_GT(ReplayCorpus("s3_listing", fuzz::S3ListingTarget), 0);
}

TEST(FuzzCorpusTest, GcsListingInputs) {
  EXPECT_GT(ReplayCorpus("gcs_listing", fuzz::GcsListingTarget), 0);
}

}  // namespace
}  // namespace dataecho
