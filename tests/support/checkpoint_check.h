// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// support/checkpoint_check.h: what the checkpoint tests of the stages and the
// record sources share: elements as comparable text, CheckResumes() (save at
// random positions, restore into a rebuilt pipeline, compare with an
// uninterrupted run) and small TFRecord files.
#ifndef DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_
#define DATAECHO_TESTS_SUPPORT_CHECKPOINT_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/temp_files.h"

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

inline std::vector<std::string> Tail(const std::vector<std::string>& v, size_t from) {
  return std::vector<std::string>(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
}

// Saves `make()` at `positions` random positions (always 0 and the end too),
// restores a rebuilt pipeline from each state (and, once, saves the restored
// one again at once and restores that) and compares what follows with an
// uninterrupted run. Returns the number of elements of a whole run.
template <typename T>
size_t CheckResumes(const std::function<Pipeline<T>()>& make, int positions = 16, uint32_t seed = 1,
                    size_t min_position = 0) {
  Pipeline<T> whole = make();
  EXPECT_TRUE(whole.status().ok()) << whole.status();
  const std::vector<std::string> expected = Rest(whole);
  EXPECT_FALSE(expected.empty());
  std::mt19937 rng(seed);
  std::vector<size_t> at = {min_position, expected.size()};
  for (int i = 2; i < positions; ++i) {
    at.push_back(std::uniform_int_distribution<size_t>(min_position, expected.size())(rng));
  }
  for (size_t k : at) {
    std::string state;
    {
      Pipeline<T> first = make();
      for (size_t i = 0; i < k; ++i) {
        absl::StatusOr<std::optional<T>> next = first.Next();
        EXPECT_TRUE(next.ok() && next->has_value()) << "at " << i;
      }
      absl::StatusOr<std::string> saved = first.SaveState();
      EXPECT_TRUE(saved.ok()) << saved.status() << " at " << k;
      if (!saved.ok()) return 0;
      state = *saved;
      EXPECT_EQ(Rest(first), Tail(expected, k)) << "the saved pipeline, read on, at " << k;
    }
    Pipeline<T> second = make();
    absl::Status restored = second.RestoreState(state);
    EXPECT_TRUE(restored.ok()) << restored << " at " << k;
    // A restored pipeline saves the same position again.
    absl::StatusOr<std::string> again = second.SaveState();
    EXPECT_TRUE(again.ok()) << again.status() << " at " << k;
    if (!again.ok()) return 0;
    Pipeline<T> third = make();
    EXPECT_TRUE(third.RestoreState(*again).ok()) << " at " << k;
    EXPECT_EQ(Rest(second), Tail(expected, k)) << "restored at " << k << " of " << expected.size();
    EXPECT_EQ(Rest(third), Tail(expected, k)) << "restored twice at " << k;
  }
  return expected.size();
}

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
