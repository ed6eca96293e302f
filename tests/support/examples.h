// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Test data: Examples with known payloads, and pipeline draining helpers.
#ifndef DATAECHO_TESTS_SUPPORT_EXAMPLES_H_
#define DATAECHO_TESTS_SUPPORT_EXAMPLES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/example.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"
#include "support/temp_files.h"

namespace dataecho::testing {

// Example i has one uint8 component of `bytes` bytes, byte j = (i * 31 + j) % 251,
// shape [bytes], label i % 10, source_index i.
Example MakeExample(uint64_t i, int64_t bytes = 16);
std::vector<Example> MakeExamples(int64_t n, int64_t bytes = 16);

// An augmentation whose output depends on the repeat index it sees: component
// 0 (of `bytes` uint8) becomes byte j = source_index * 31 + repeat_index * 7 +
// j + 1. Copies augmented separately differ, copies of one augmented item do
// not: what tells the echo placements apart.
absl::StatusOr<Example> StampRepeat(Example e, int64_t bytes);

// A trainer's augmentation: a side x side crop of the image padded by
// `padding` (RandomCrop, seed 11), then a flip (RandomFlip, seed 12); seeded
// per element, so deterministic (what a restore needs).
absl::StatusOr<Example> CropAndFlip(Example e, int64_t side, int64_t padding);

// `files` TFRecord files DIR/images-<f>.tfrecord of `per_file` image records
// each (formats/image_record.h): uint8 [side, side, 1] images whose pixels
// differ from image to image and are never 0 (so that crops that pad differ
// from crops that do not), labels 0..9; their paths.
std::vector<std::string> WriteImageShards(const TempDir& dir, int files, int per_file,
                                          int64_t side);

// Reads until end of stream or error; returns the elements or the error.
template <typename T>
absl::StatusOr<std::vector<T>> Drain(Stage<T>& stage) {
  std::vector<T> out;
  while (true) {
    absl::StatusOr<std::optional<T>> r = stage.Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) return out;
    out.push_back(std::move(**r));
  }
}

// Reads until end of stream or error; the elements before it and the final status.
template <typename T>
std::pair<std::vector<T>, absl::Status> DrainWithStatus(Stage<T>& stage) {
  std::vector<T> out;
  while (true) {
    absl::StatusOr<std::optional<T>> r = stage.Next();
    if (!r.ok()) return {std::move(out), r.status()};
    if (!r->has_value()) return {std::move(out), absl::OkStatus()};
    out.push_back(std::move(**r));
  }
}

// Drains `p` (a Stage or a Pipeline of Examples): how many times each source
// index came, or the first error.
template <typename P>
absl::StatusOr<std::map<uint64_t, int>> CountBySourceIndex(P& p) {
  std::map<uint64_t, int> counts;
  while (true) {
    auto r = p.Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) return counts;
    ++counts[(*r)->source_index];
  }
}

// What a record source yielded: the records before the end or the error, the
// final status (OK at a clean end) and the source's statistics.
struct ReadResult {
  std::vector<Record> records;
  absl::Status status;
  std::vector<StageStats> stats;
};
ReadResult ReadAllRecords(Stage<Record>& source);

// Expects `status` to be DATA_LOSS "corrupted record at <uri>:<offset>".
void ExpectCorruptedAt(const absl::Status& status, const std::string& uri, uint64_t offset);

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_EXAMPLES_H_
