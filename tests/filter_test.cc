// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Filter: keeps what the predicate accepts, in order; predicate and input
// errors in order and sticky; options and stats.
#include "dataecho/filter.h"

#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::Drain;
using testing::DrainWithStatus;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FilterTest, KeepsAcceptedElementsInOrderAndCountsTheRest) {
  auto p = FromRange(0, 20).Filter([](const int64_t& x) { return x % 3 == 0; });
  ASSERT_TRUE(p.status().ok()) << p.status();
  std::vector<int64_t> kept;
  for (int64_t x : p) kept.push_back(x);
  EXPECT_TRUE(p.status().ok()) << p.status();
  EXPECT_THAT(kept, ElementsAre(0, 3, 6, 9, 12, 15, 18));
  const std::vector<StageStats> stats = p.Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[1].name, "filter");
  EXPECT_EQ(stats[1].elements, 7);
  EXPECT_EQ(stats[1].Extra("dropped"), 13);
}

TEST(FilterTest, StatusOrPredicateErrorComesAtItsPositionAndStays) {
  auto stage = FromRange(0, 10)
                   .Filter(
                       [](const int64_t& x) -> absl::StatusOr<bool> {
                         if (x == 6) return absl::DataLossError("bad element 6");
                         return x % 2 == 0;
                       },
                       {.name = "even"})
                   .Release();
  ASSERT_TRUE(stage.ok());
  auto [kept, status] = DrainWithStatus(**stage);
  EXPECT_THAT(kept, ElementsAre(0, 2, 4));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ((*stage)->Next().status().code(), absl::StatusCode::kDataLoss);  // sticky
}

TEST(FilterTest, InputErrorPassesInOrderThroughAsynchronousStages) {
  int64_t i = 0;
  auto p = FromGenerator<int64_t>([&i]() -> absl::StatusOr<std::optional<int64_t>> {
             if (i == 9) return absl::UnavailableError("source gone");
             return i++;
           })
               .Prefetch({.depth = 2})
               .Filter([](const int64_t& x) { return x >= 5; });
  auto stage = std::move(p).Release();
  ASSERT_TRUE(stage.ok());
  auto [kept, status] = DrainWithStatus(**stage);
  EXPECT_THAT(kept, ElementsAre(5, 6, 7, 8));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
}

TEST(FilterTest, FiltersExamplesByLabel) {
  auto p =
      FromVector(testing::MakeExamples(50)).Filter([](const Example& e) { return e.label == 3; });
  auto stage = std::move(p).Release();
  ASSERT_TRUE(stage.ok());
  auto kept = Drain(**stage);
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 5u);
  for (const Example& e : *kept) EXPECT_EQ(e.source_index % 10, 3u);
}

TEST(FilterTest, RejectsEmptyPredicateAndNullInput) {
  auto empty = FilterStage<int64_t>::Make(*RangeSource(0, 3), nullptr);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("filter: empty predicate"));
  auto null = FilterStage<int64_t>::Make(nullptr, [](const int64_t&) { return true; });
  EXPECT_EQ(null.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FilterTest, TakeAfterFilterStopsReadingTheInput) {
  int64_t reads = 0;
  auto p = FromGenerator<int64_t>([&reads]() -> absl::StatusOr<std::optional<int64_t>> {
             return reads++;  // endless
           }).Filter([](const int64_t& x) {
               return x % 5 == 0;
             }).Take(3);
  std::vector<int64_t> kept;
  for (int64_t x : p) kept.push_back(x);
  EXPECT_TRUE(p.status().ok()) << p.status();
  EXPECT_THAT(kept, ElementsAre(0, 5, 10));
  EXPECT_EQ(reads, 11);  // up to the third kept element, not one more
}

TEST(FilterTest, CancelStopsIt) {
  auto p = FromRange(0, 1000).Filter([](const int64_t&) { return true; });
  ASSERT_TRUE(p.Next().ok());
  p.Cancel();
  EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dataecho
