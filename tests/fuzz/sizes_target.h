// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// sizes_target.h: the libFuzzer target of sizes from options, data and state
// (memory.h): PaddedBatch options and row shapes, Interleave's cycle_length
// and block_length, epoch plans (record counts, world sizes, restarts), each
// read from the input as 64-bit numbers. Every size must be refused with a
// status or served within the cap (16 MiB here); a crash, an abort, a batch
// above the cap or a plan that loses records is a failure. Run by sizes_fuzz
// and, on the committed corpus, by FuzzCorpusTest.SizesInputs.
#ifndef DATAECHO_TESTS_FUZZ_SIZES_TARGET_H_
#define DATAECHO_TESTS_FUZZ_SIZES_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "dataecho/padded_batch.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/epoch_plan.h"

namespace dataecho::fuzz {

// The input as little-endian 64-bit numbers, zeros past its end.
class SizeReader {
 public:
  SizeReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  int64_t Next() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i, ++pos_) {
      if (pos_ < size_) v |= uint64_t{data_[pos_]} << (8 * i);
    }
    return static_cast<int64_t>(v);
  }
  // A number in [0, n).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>(Next()) % n; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline void PaddedBatchSizes(SizeReader& in) {
  constexpr int64_t kCap = 16 << 20;
  PaddedBatchOptions options;
  options.batch_size = in.Next();
  options.max_bytes = kCap;
  const auto rank = static_cast<size_t>(in.Below(4));
  Shape fixed;
  for (size_t d = 0; d < rank; ++d) fixed.push_back(in.Next());
  options.padded_shapes = {fixed};
  const uint64_t flags = in.Below(4);
  options.masks = (flags & 1) != 0;
  options.lengths = (flags & 2) != 0;
  std::vector<Example> rows;
  for (uint64_t r = in.Below(8); r > 0; --r) {
    Shape shape;
    for (size_t d = 0; d < rank; ++d) shape.push_back(static_cast<int64_t>(in.Below(64)));
    MutableBuffer mb(static_cast<size_t>(NumElements(shape)));
    rows.emplace_back();
    rows.back().components.push_back(*Tensor::Make(DType::kUInt8, shape, std::move(mb).Freeze()));
    rows.back().source_index = r;
  }
  auto p = FromVector(std::move(rows)).PaddedBatch(options);
  for (int i = 0; i < 16 && p.status().ok(); ++i) {
    auto b = p.Next();
    if (!b.ok() || !b->has_value()) return;
    if (static_cast<int64_t>((*b)->ByteSize()) > kCap) std::abort();  // the cap did not hold
  }
}

inline void InterleaveSizes(SizeReader& in) {
  std::vector<Pipeline<int64_t>> inputs;
  for (uint64_t n = in.Below(5); n > 0; --n) {
    inputs.push_back(FromRange(0, static_cast<int64_t>(in.Below(5))));
  }
  auto p = Interleave(std::move(inputs), {.cycle_length = in.Next(), .block_length = in.Next()});
  for (int i = 0; i < 100 && p.status().ok(); ++i) {
    auto next = p.Next();
    if (!next.ok() || !next->has_value()) return;
  }
  if (p.status().ok()) std::abort();  // more elements than the inputs hold
}

inline void EpochPlanSizes(SizeReader& in) {
  std::vector<uint64_t> counts;
  for (uint64_t n = in.Below(6); n > 0; --n) counts.push_back(static_cast<uint64_t>(in.Next()));
  EpochPlanOptions options{.seed = 1,
                           .mode = in.Below(2) == 0 ? ShardMode::kRecords : ShardMode::kFiles};
  EpochProgress progress;
  for (uint64_t n = in.Below(3); n > 0; --n) {
    progress.runs.push_back(
        {.world_size = static_cast<int>(in.Next()), .position = static_cast<uint64_t>(in.Next())});
  }
  const auto world_size = static_cast<int>(in.Next());
  absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, options, progress, world_size);
  if (!plan.ok()) return;
  // Every record not consumed before this run is in exactly one rank's share.
  uint64_t planned = 0;
  for (int r = 0; r < world_size; ++r) planned += plan->RankRecords(r);
  if (planned != plan->total_records - plan->position) std::abort();
}

inline void SizesTarget(const uint8_t* data, size_t size) {
  SizeReader in(data, size);
  PaddedBatchSizes(in);
  InterleaveSizes(in);
  EpochPlanSizes(in);
}

}  // namespace dataecho::fuzz

#endif  // DATAECHO_TESTS_FUZZ_SIZES_TARGET_H_
