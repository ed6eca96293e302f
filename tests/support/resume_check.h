// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// support/resume_check.h: the checkpoint tests' common check. A pipeline
// saved at random positions, destroyed, rebuilt and restored yields exactly
// the rest of an uninterrupted run, compared element by element (every index
// and payload byte).
//
//   size_t largest = 0;
//   size_t n = testing::CheckResumes<Batch>([&] { return BuildPipeline(); }, 20, 1, 0, &largest);
#ifndef DATAECHO_TESTS_SUPPORT_RESUME_CHECK_H_
#define DATAECHO_TESTS_SUPPORT_RESUME_CHECK_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/crc32c.h"
#include "dataecho/example.h"
#include "dataecho/pipeline.h"
#include "dataecho/record.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace dataecho::testing {

// An element as comparable text: every index and every payload byte.
inline std::string Key(int64_t v) { return std::to_string(v); }
inline std::string Key(const Example& e) {
  std::string s =
      fmt::format("ex {} r{} e{} l{}:", e.source_index, e.repeat_index, e.epoch, e.label);
  for (const Tensor& t : e.components) {
    s.append(fmt::format("[{}]", t.num_elements()));
    s.append(t.buffer().view());
  }
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
  for (const Tensor& t : b.components) {
    s.append(fmt::format("[{}]", t.num_elements()));
    s.append(t.buffer().view());
  }
  return s;
}
template <typename A, typename B>
std::string Key(const std::pair<A, B>& p) {
  return Key(p.first) + " | " + Key(p.second);
}

// How a test names an element: Key() by default.
template <typename T>
using KeyFn = std::function<std::string(const T&)>;
template <typename T>
std::string DefaultKey(const T& v) {
  return Key(v);
}

// The rest of `p`, as keys (a failure if it ends in an error).
template <typename T>
std::vector<std::string> Rest(Pipeline<T>& p, const KeyFn<T>& key = DefaultKey<T>) {
  std::vector<std::string> out;
  while (true) {
    absl::StatusOr<std::optional<T>> next = p.Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) break;
    out.push_back(key(**next));
  }
  return out;
}

// Reads `n` elements of `p` (appending their keys to `*keys`, if given), then
// saves it: the state, or the error (or the end) met before the n-th element.
template <typename T>
absl::StatusOr<std::string> SaveAfter(Pipeline<T>& p, size_t n,
                                      std::vector<std::string>* keys = nullptr,
                                      const KeyFn<T>& key = DefaultKey<T>) {
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<std::optional<T>> next = p.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) {
      return absl::OutOfRangeError(fmt::format("the pipeline ended after {} of {}", i, n));
    }
    if (keys != nullptr) keys->push_back(key(**next));
  }
  return p.SaveState();
}
template <typename T>
absl::StatusOr<std::string> SaveAfter(Pipeline<T>&& p, size_t n) {
  return SaveAfter(p, n);
}

// Reads `k` elements of `make()`, saves it, restores a rebuilt pipeline from
// the state and reads that to the end: the keys of everything read, before
// and after the save, in the order read. For sources that promise every
// element once, in no fixed order: sorted, it is the sorted whole run.
template <typename T>
std::vector<std::string> KeysAcrossSave(const std::function<Pipeline<T>()>& make, size_t k,
                                        const KeyFn<T>& key = DefaultKey<T>) {
  std::vector<std::string> got;
  absl::StatusOr<std::string> state;
  {
    Pipeline<T> first = make();
    state = SaveAfter(first, k, &got, key);
  }
  EXPECT_TRUE(state.ok()) << state.status() << " after " << k;
  if (!state.ok()) return got;
  Pipeline<T> second = make();
  const absl::Status restored = second.RestoreState(*state);
  EXPECT_TRUE(restored.ok()) << restored << " after " << k;
  for (std::string& rest : Rest(second, key)) got.push_back(std::move(rest));
  return got;
}

inline std::vector<std::string> Tail(const std::vector<std::string>& v, size_t from) {
  return std::vector<std::string>(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
}

// Saves `make()` after each of `at` elements of an uninterrupted run that
// read `expected`, destroys it, restores a rebuilt pipeline from each state
// (and saves the restored one again at once and restores that) and compares
// what follows, element by element, with the run; the saved pipeline, read on
// after the save, gives the same continuation. `*largest_state`, if given, is
// raised to the largest state. False if a save failed.
template <typename T>
bool CheckResumesAt(const std::function<Pipeline<T>()>& make,
                    const std::vector<std::string>& expected, const std::vector<size_t>& at,
                    size_t* largest_state = nullptr) {
  for (size_t k : at) {
    std::string state;
    {
      Pipeline<T> first = make();
      absl::StatusOr<std::string> saved = SaveAfter(first, k);
      EXPECT_TRUE(saved.ok()) << saved.status() << " at " << k;
      if (!saved.ok()) return false;
      state = *saved;
      if (largest_state != nullptr) *largest_state = std::max(*largest_state, state.size());
      EXPECT_EQ(Rest(first), Tail(expected, k)) << "the saved pipeline, read on, at " << k;
    }  // destroyed
    Pipeline<T> second = make();
    absl::Status restored = second.RestoreState(state);
    EXPECT_TRUE(restored.ok()) << restored << " at " << k;
    // A restored pipeline saves the same position again.
    absl::StatusOr<std::string> again = second.SaveState();
    EXPECT_TRUE(again.ok()) << again.status() << " at " << k;
    if (!again.ok()) return false;
    Pipeline<T> third = make();
    EXPECT_TRUE(third.RestoreState(*again).ok()) << " at " << k;
    EXPECT_EQ(Rest(second), Tail(expected, k)) << "restored at " << k << " of " << expected.size();
    EXPECT_EQ(Rest(third), Tail(expected, k)) << "restored twice at " << k;
  }
  return true;
}

// CheckResumesAt() at `positions` random positions (always `min_position`
// and the end too). Returns the number of elements of a whole run (0 if a
// save failed).
template <typename T>
size_t CheckResumes(const std::function<Pipeline<T>()>& make, int positions = 20, uint32_t seed = 1,
                    size_t min_position = 0, size_t* largest_state = nullptr) {
  Pipeline<T> whole = make();
  EXPECT_TRUE(whole.status().ok()) << whole.status();
  const std::vector<std::string> expected = Rest(whole);
  EXPECT_FALSE(expected.empty());
  std::mt19937 rng(seed);
  std::vector<size_t> at = {min_position, expected.size()};
  for (int i = 2; i < positions; ++i) {
    at.push_back(std::uniform_int_distribution<size_t>(min_position, expected.size())(rng));
  }
  return CheckResumesAt(make, expected, at, largest_state) ? expected.size() : 0;
}

// Restores a new `make()` from `state`, which must fail with DATA_LOSS and
// each of `parts` in its message (what a restore over changed data says).
template <typename T>
void ExpectRestoreIsDataLoss(const std::function<Pipeline<T>()>& make, const std::string& state,
                             const std::vector<std::string>& parts) {
  Pipeline<T> q = make();
  const absl::Status s = q.RestoreState(state);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  for (const std::string& part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "no '" << part << "' in " << s;
  }
}

// Restores `trials` copies of `state` (from a pipeline `make()` builds), each
// with one bit flipped and its checksum made valid again, into rebuilt
// pipelines: each must fail to restore or end (an error or the end) within
// 1,000 elements, never crash or spin.
template <typename T>
void CheckFlippedStatesEnd(const std::function<Pipeline<T>()>& make, const std::string& state,
                           int trials = 300, uint32_t seed = 5) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    std::string body = state.substr(0, state.size() - 4);
    const size_t at = std::uniform_int_distribution<size_t>(4, body.size() - 1)(rng);
    body[at] = static_cast<char>(body[at] ^ (1 << (trial % 8)));
    const uint32_t crc = MaskCrc32c(Crc32c(body));
    for (int b = 0; b < 4; ++b) body.push_back(static_cast<char>((crc >> (8 * b)) & 0xff));
    Pipeline<T> q = make();
    if (!q.RestoreState(body).ok()) continue;
    int n = 0;
    while (n < 1000) {
      absl::StatusOr<std::optional<T>> next = q.Next();
      if (!next.ok() || !next->has_value()) break;
      ++n;
    }
    EXPECT_LT(n, 1000) << "trial " << trial;
  }
}

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_RESUME_CHECK_H_
