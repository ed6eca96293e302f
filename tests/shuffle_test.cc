// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/shuffle.h"

#include <algorithm>
#include <map>

#include "dataecho/internal/random.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::Drain;

std::vector<int64_t> ShuffleRange(int64_t n, int64_t buffer, uint64_t seed) {
  auto stage = FromRange(0, n).Shuffle({.buffer_size = buffer, .seed = seed}).Release();
  return *Drain(**stage);
}

TEST(ShuffleTest, OutputIsAPermutation) {
  for (int64_t buffer : {1, 7, 100, 5000}) {
    std::vector<int64_t> out = ShuffleRange(1000, buffer, 3);
    ASSERT_EQ(out.size(), 1000u);
    std::vector<int64_t> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
    if (buffer == 1) {
      EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
    } else {
      EXPECT_FALSE(std::is_sorted(out.begin(), out.end())) << buffer;
    }
  }
}

// The documented algorithm, written out: fill the buffer, then emit a
// uniformly drawn slot and refill it (or, once the input is done, move the
// last element into it). The stage draws each slot one call early, to
// prefetch it; its order must stay exactly this one.
std::vector<int64_t> ReferenceShuffle(int64_t n, int64_t buffer, uint64_t seed) {
  internal::Rng rng(seed);
  std::vector<int64_t> buf, out;
  int64_t next = 0;
  while (next < n && static_cast<int64_t>(buf.size()) < buffer) buf.push_back(next++);
  while (!buf.empty()) {
    const size_t i = rng.Below(buf.size());
    out.push_back(buf[i]);
    if (next < n) {
      buf[i] = next++;
    } else {
      buf[i] = buf.back();
      buf.pop_back();
    }
  }
  return out;
}

TEST(ShuffleTest, OrderIsTheDocumentedAlgorithm) {
  for (int64_t n : {0, 1, 5, 99, 100, 101, 1000}) {
    for (int64_t buffer : {1, 2, 100, 5000}) {
      EXPECT_EQ(ShuffleRange(n, buffer, 7), ReferenceShuffle(n, buffer, 7)) << n << " " << buffer;
    }
  }
}

TEST(ShuffleTest, SeedDeterminesOrder) {
  EXPECT_EQ(ShuffleRange(500, 100, 1), ShuffleRange(500, 100, 1));
  EXPECT_NE(ShuffleRange(500, 100, 1), ShuffleRange(500, 100, 2));
}

TEST(ShuffleTest, SpreadsEchoedCopies) {
  constexpr int64_t kItems = 20000;
  auto p = FromVector(testing::MakeExamples(kItems, 1))
               .Echo({.factor = 4})
               .Shuffle({.buffer_size = 10000, .seed = 11});
  std::map<uint64_t, std::vector<int64_t>> positions;
  int64_t pos = 0;
  while (true) {
    auto r = p.Next();
    ASSERT_TRUE(r.ok());
    if (!r->has_value()) break;
    positions[(*r)->source_index].push_back(pos++);
  }
  ASSERT_EQ(pos, 4 * kItems);
  double total = 0;
  int64_t gaps = 0;
  for (const auto& [index, ps] : positions) {
    ASSERT_EQ(ps.size(), 4u);
    for (size_t i = 1; i < ps.size(); ++i, ++gaps) total += static_cast<double>(ps[i] - ps[i - 1]);
  }
  EXPECT_GE(total / static_cast<double>(gaps), 1000.0);
}

TEST(ShuffleTest, ReportsBytesHeldAndEnforcesCap) {
  auto p = FromVector(testing::MakeExamples(100, 100)).Shuffle({.buffer_size = 10, .seed = 1});
  ASSERT_TRUE(p.Next().ok());
  const StageStats s = p.Stats().back();
  EXPECT_EQ(s.Extra("bytes_held"), 10 * 100);  // the next input took the emitted one's slot
  EXPECT_EQ(s.Extra("buffered"), 10);
  EXPECT_EQ(s.Extra("peak_bytes_held"), 10 * 100);

  auto capped =
      FromVector(testing::MakeExamples(100, 100)).Shuffle({.buffer_size = 50, .max_bytes = 2000});
  auto r = capped.Next();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("max_bytes = 2000"), absl::string_view::npos) << r.status();
  EXPECT_EQ(capped.Next().status().code(), absl::StatusCode::kResourceExhausted);  // sticky
}

TEST(ShuffleTest, InvalidOptions) {
  EXPECT_EQ(FromRange(0, 3).Shuffle({.buffer_size = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromRange(0, 3).Shuffle({.max_bytes = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dataecho
