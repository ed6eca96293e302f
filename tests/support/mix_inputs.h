// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// support/mix_inputs.h: inputs for the Mix tests (mix_test.cc,
// mix_checkpoint_test.cc): input k gives the numbers, or the Examples of
// source index, k * kSpan + [0, n_k), so every element names its input.
#ifndef DATAECHO_TESTS_SUPPORT_MIX_INPUTS_H_
#define DATAECHO_TESTS_SUPPORT_MIX_INPUTS_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho::testing {

inline constexpr int64_t kSpan = 1'000'000'000;  // input k gives k * kSpan + i

// Input k of `sizes`: the numbers k * kSpan + [0, sizes[k]).
inline std::vector<Pipeline<int64_t>> RangeInputs(const std::vector<int64_t>& sizes) {
  std::vector<Pipeline<int64_t>> out;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int64_t base = static_cast<int64_t>(k) * kSpan;
    out.push_back(FromRange(base, base + sizes[k]));
  }
  return out;
}

// Input k of `sizes`: Examples with source indices k * kSpan + [0, sizes[k]).
inline std::vector<Pipeline<Example>> ExampleInputs(const std::vector<int64_t>& sizes) {
  std::vector<Pipeline<Example>> out;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<Example> items;
    for (int64_t i = 0; i < sizes[k]; ++i) {
      items.push_back(MakeExample(static_cast<uint64_t>(k) * kSpan + i, 8));
    }
    out.push_back(FromVector(std::move(items)));
  }
  return out;
}

// Every element of `p` until its end (a failure if it ends in an error).
template <typename T>
std::vector<T> All(Pipeline<T>& p) {
  std::vector<T> out;
  while (true) {
    absl::StatusOr<std::optional<T>> next = p.Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) return out;
    out.push_back(std::move(**next));
  }
}

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_MIX_INPUTS_H_
