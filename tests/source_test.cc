// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/source.h"

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
