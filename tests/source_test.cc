// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/source.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::Drain;
using testing::DrainWithStatus;

TEST(SourceTest, RangeTakeAndVector) {
  auto s = FromRange(0, 10, 3).Release();
  EXPECT_EQ(*Drain(**s), (std::vector<int64_t>{0, 3, 6, 9}));
  auto t = FromRange(0, 100).Take(5).Release();
  EXPECT_EQ(*Drain(**t), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  auto v = FromVector(std::vector<int>{4, 5}).Release();
  EXPECT_EQ(*Drain(**v), (std::vector<int>{4, 5}));
  EXPECT_FALSE((*v)->Next()->has_value());  // end of stream stays
}

// Steps that pass INT64_MAX end the range instead of wrapping around (Take
// bounds a run that would wrap, so the test ends either way).
TEST(SourceTest, RangeNearInt64MaxEndsWithoutWrapping) {
  constexpr int64_t kMax = INT64_MAX;
  constexpr int64_t kMin = INT64_MIN;
  auto near_max = FromRange(kMax - 5, kMax, 3).Take(10).Release();
  EXPECT_EQ(*Drain(**near_max), (std::vector<int64_t>{kMax - 5, kMax - 2}));
  auto one = FromRange(kMax - 1, kMax, kMax).Take(10).Release();
  EXPECT_EQ(*Drain(**one), (std::vector<int64_t>{kMax - 1}));
  auto widest = FromRange(kMin, kMax, kMax).Take(10).Release();
  EXPECT_EQ(*Drain(**widest), (std::vector<int64_t>{kMin, -1, kMax - 1}));
  auto from_min = FromRange(kMin, kMin + 3, 2).Take(10).Release();
  EXPECT_EQ(*Drain(**from_min), (std::vector<int64_t>{kMin, kMin + 2}));

  // A state saved near the end restores (its position is checked without
  // overflow); one saved at the end restores to the end.
  for (int taken : {2, 3}) {
    Pipeline<int64_t> first = FromRange(kMin, kMax, kMax);
    for (int i = 0; i < taken; ++i) ASSERT_TRUE(first.Next().ok());
    absl::StatusOr<std::string> state = first.SaveState();
    ASSERT_TRUE(state.ok()) << state.status();
    Pipeline<int64_t> again = FromRange(kMin, kMax, kMax);
    absl::Status restored = again.RestoreState(*state);
    ASSERT_TRUE(restored.ok()) << restored << " after " << taken;
    std::vector<int64_t> rest;
    for (int i = 0; i < 10; ++i) {
      absl::StatusOr<std::optional<int64_t>> next = again.Next();
      ASSERT_TRUE(next.ok()) << next.status();
      if (!next->has_value()) break;
      rest.push_back(**next);
    }
    EXPECT_EQ(rest, taken == 2 ? std::vector<int64_t>{kMax - 1} : std::vector<int64_t>{});
  }
}

TEST(SourceTest, GeneratorErrorIsSticky) {
  int calls = 0;
  auto g = FromGenerator<int>([&]() -> absl::StatusOr<std::optional<int>> {
    if (++calls == 3) return absl::DataLossError("bad");
    return calls;
  });
  auto [items, status] = DrainWithStatus(**std::move(g).Release());
  EXPECT_EQ(items, (std::vector<int>{1, 2}));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
}

TEST(SourceTest, RepeatRunsEpochs) {
  auto r = RepeatSource<int64_t>([] { return RangeSource(0, 3); }, 3);
  EXPECT_EQ(*Drain(**r), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  auto forever =
      From(RepeatSource<int64_t>([] { return RangeSource(0, 2); }, -1)).Take(7).Release();
  EXPECT_EQ(Drain(**forever)->size(), 7u);
}

TEST(SourceTest, CancelledSourceReturnsCancelled) {
  auto s = RangeSource(0, 10);
  (*s)->Cancel();
  EXPECT_EQ((*s)->Next().status().code(), absl::StatusCode::kCancelled);
}

TEST(StatsTest, TableAndJson) {
  auto q = FromRange(0, 10).Echo({.factor = 2});
  while (q.Next()->has_value()) {
  }
  const std::string table = FormatStatsTable(q.Stats());
  EXPECT_NE(table.find("realized_factor=2"), std::string::npos) << table;
  const std::string json = StatsToJson(q.Stats());
  EXPECT_NE(json.find("{\"stage\": \"range\", \"elements\": 10"), std::string::npos) << json;
  EXPECT_NE(json.find("\"realized_factor\": 2"), std::string::npos) << json;
}

}  // namespace
}  // namespace dataecho
