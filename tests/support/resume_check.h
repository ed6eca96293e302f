// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Checkpoint tests' common check: a pipeline saved at random positions,
// destroyed, rebuilt and restored yields exactly the rest of an
// uninterrupted run, compared element by element (every index and payload
// byte).
//
//   size_t largest = testing::CheckResumes<Batch>([&] { return BuildPipeline(); });
#ifndef DATAECHO_TESTS_SUPPORT_RESUME_CHECK_H_
#define DATAECHO_TESTS_SUPPORT_RESUME_CHECK_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "dataecho/example.h"
#include "dataecho/formats/record.h"
#include "dataecho/pipeline.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace dataecho::testing {

// An element as comparable text: every index and every payload byte.
inline std::string Key(int64_t v) { return std::to_string(v); }
inline std::string Key(const Example& e) {
  std::string s =
      fmt::format("ex {} r{} e{} l{}:", e.source_index, e.repeat_index, e.epoch, e.label);
  for (const Tensor& t : e.components) s.append(t.buffer().view());
  return s;
}
inline std::string Key(const Record& r) {
  return fmt::format("rec {} r{} e{} @{} {}:{}", r.source_index, r.repeat_index, r.epoch, r.offset,
                     r.uri(), r.data.view());
}
inline std::string Key(const Batch& b) {
  std::string s =
      fmt::format("batch n{} f{} r{} e{}:", b.num_rows, b.fresh_rows, b.repeat_index, b.epoch);
  s.append(b.labels.buffer().view());
  s.append(b.source_indices.buffer().view());
  s.append(b.repeat_indices.buffer().view());
  for (const Tensor& t : b.components) s.append(t.buffer().view());
  return s;
}

// The rest of `p`, as keys (a failure if it ends in an error).
template <typename T>
std::vector<std::string> Rest(Pipeline<T>& p) {
  std::vector<std::string> out;
  while (true) {
    absl::StatusOr<std::optional<T>> next = p.Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) break;
    out.push_back(Key(**next));
  }
  return out;
}

template <typename T>
std::vector<std::string> Tail(const std::vector<std::string>& v, size_t from) {
  return std::vector<std::string>(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
}

// Saves `make()` at `positions` random positions (always 0 and the end too),
// restores a rebuilt pipeline from each state and compares what follows,
// element by element, with an uninterrupted run; the saved pipeline, read on
// after the save, gives the same continuation. Returns the largest state.
template <typename T>
size_t CheckResumes(const std::function<Pipeline<T>()>& make, int positions = 20,
                    uint32_t seed = 1) {
  Pipeline<T> whole = make();
  EXPECT_TRUE(whole.status().ok()) << whole.status();
  const std::vector<std::string> expected = Rest(whole);
  EXPECT_FALSE(expected.empty());
  std::mt19937 rng(seed);
  std::vector<size_t> at = {0, expected.size()};
  for (int i = 2; i < positions; ++i) {
    at.push_back(std::uniform_int_distribution<size_t>(0, expected.size())(rng));
  }
  size_t largest = 0;
  for (size_t k : at) {
    std::string state;
    {
      Pipeline<T> first = make();
      for (size_t i = 0; i < k; ++i) {
        absl::StatusOr<std::optional<T>> next = first.Next();
        EXPECT_TRUE(next.ok() && next->has_value());
      }
      absl::StatusOr<std::string> saved = first.SaveState();
      EXPECT_TRUE(saved.ok()) << saved.status() << " at " << k;
      if (!saved.ok()) return 0;
      state = *saved;
      largest = std::max(largest, state.size());
      EXPECT_EQ(Rest(first), Tail<T>(expected, k)) << "the saved pipeline, read on, at " << k;
    }  // destroyed
    Pipeline<T> second = make();
    absl::Status restored = second.RestoreState(state);
    EXPECT_TRUE(restored.ok()) << restored << " at " << k;
    EXPECT_EQ(Rest(second), Tail<T>(expected, k))
        << "restored at " << k << " of " << expected.size();
  }
  return largest;
}

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_RESUME_CHECK_H_
