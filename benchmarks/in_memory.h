// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// in_memory.h: the in-memory input of the stage benchmarks (core_benchmark,
// builder_benchmark): Fashion-MNIST-sized sets of uint8 examples, and an
// endless source cycling through a set, so that a benchmark measures its
// stage and not the reading.
//
//   auto p = bench::Cycle(bench::Dataset(784)).Shuffle({.buffer_size = 10000});
#ifndef DATAECHO_BENCHMARKS_IN_MEMORY_H_
#define DATAECHO_BENCHMARKS_IN_MEMORY_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "dataecho/pipeline.h"

namespace dataecho::bench {

inline constexpr int64_t kDatasetRows = 60000;  // Fashion-MNIST-sized

// kDatasetRows examples with one uint8 [bytes] component, every byte of
// example i equal to i mod 256, source_index i. Made once per size
// (REQUIRES: bytes < 4096).
inline const std::vector<Example>& Dataset(int64_t bytes) {
  static auto* cache = new std::vector<std::vector<Example>>(4096);
  std::vector<Example>& d = (*cache)[static_cast<size_t>(bytes)];
  if (d.empty()) {
    for (int64_t i = 0; i < kDatasetRows; ++i) {
      MutableBuffer mb(static_cast<size_t>(bytes));
      std::memset(mb.data(), static_cast<int>(i), static_cast<size_t>(bytes));
      Example e;
      e.components.push_back(*Tensor::Make(DType::kUInt8, {bytes}, std::move(mb).Freeze()));
      e.source_index = static_cast<uint64_t>(i);
      d.push_back(std::move(e));
    }
  }
  return d;
}

// An endless source cycling through `d` (copies share payloads): the cost of
// handing out an element that is already in memory.
class CycleSource final : public Stage<Example> {
 public:
  explicit CycleSource(std::vector<Example> d) : d_(std::move(d)) {}
  absl::StatusOr<std::optional<Example>> Next() override {
    if (i_ == d_.size()) i_ = 0;
    return d_[i_++];
  }
  void Cancel() override {}
  void AppendStats(std::vector<StageStats>*) const override {}

 private:
  std::vector<Example> d_;
  size_t i_ = 0;
};

inline Pipeline<Example> Cycle(std::vector<Example> d) {
  return From<Example>(std::make_unique<CycleSource>(std::move(d)));
}

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_IN_MEMORY_H_
