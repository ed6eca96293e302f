// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Zip: pairs in order until the shorter input ends (the longer is not read
// on), errors in order and sticky, pairs as elements of the other stages.
#include "dataecho/zip.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::DrainWithStatus;
using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ZipTest, PairsUntilTheShorterEndsWithoutReadingTheLongerOn) {
  auto reads = std::make_shared<int64_t>(0);
  auto longer = FromGenerator<int64_t>([reads]() -> absl::StatusOr<std::optional<int64_t>> {
    return (*reads)++;  // endless
  });
  auto p = FromRange(10, 13).Zip(std::move(longer));
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (auto& [a, b] : p) seen.emplace_back(a, b);
  EXPECT_TRUE(p.status().ok()) << p.status();
  EXPECT_THAT(seen, ElementsAre(Pair(10, 0), Pair(11, 1), Pair(12, 2)));
  EXPECT_EQ(*reads, 3);  // the first input ended first: the second was not asked again
  const std::vector<StageStats> stats = p.Stats();
  ASSERT_EQ(stats.size(), 3u);  // range, generator, zip
  EXPECT_EQ(stats[2].name, "zip");
  EXPECT_EQ(stats[2].elements, 3);
}

TEST(ZipTest, ErrorInEitherInputComesInOrderAndStays) {
  auto failing =
      FromGenerator<std::string>([i = 0]() mutable -> absl::StatusOr<std::optional<std::string>> {
        if (i == 2) return absl::DataLossError("bad caption 2");
        return std::to_string(i++);
      });
  auto stage = Zip(FromRange(0, 10).Prefetch({.depth = 4}), std::move(failing)).Release();
  ASSERT_TRUE(stage.ok());
  auto [pairs, status] = DrainWithStatus(**stage);
  EXPECT_THAT(pairs, ElementsAre(Pair(0, "0"), Pair(1, "1")));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ((*stage)->Next().status().code(), absl::StatusCode::kDataLoss);
}

TEST(ZipTest, BuildErrorOfEitherSideIsThePipelines) {
  auto bad_right = FromRange(0, 3).Zip(FromRange(0, 3).Prefetch({.depth = 0}));
  EXPECT_EQ(bad_right.status().code(), absl::StatusCode::kInvalidArgument);
  auto bad_left = FromRange(0, 3).Prefetch({.depth = 0}).Zip(FromRange(0, 3));
  EXPECT_EQ(bad_left.status().code(), absl::StatusCode::kInvalidArgument);
  using IntZip = ZipStage<int64_t, int64_t>;
  EXPECT_EQ(IntZip::Make(nullptr, *RangeSource(0, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ZipTest, EchoAfterZipMarksBothHalvesAndCountsBytes) {
  auto p = FromVector(testing::MakeExamples(3, 8))
               .Zip(FromVector(testing::MakeExamples(3, 4)))
               .Prefetch({.depth = 2})
               .Echo({.factor = 2});
  std::vector<std::pair<uint32_t, uint32_t>> repeats;
  for (auto& [image, caption] : p) repeats.emplace_back(image.repeat_index, caption.repeat_index);
  EXPECT_TRUE(p.status().ok()) << p.status();
  EXPECT_THAT(repeats,
              ElementsAre(Pair(0, 0), Pair(1, 1), Pair(0, 0), Pair(1, 1), Pair(0, 0), Pair(1, 1)));
  const std::vector<StageStats> stats = p.Stats();
  const StageStats& zip = stats[2];
  EXPECT_EQ(zip.name, "zip");
  EXPECT_EQ(zip.bytes, 3 * (8 + 4));
  EXPECT_EQ(stats.back().Extra("fresh"), 3);
}

TEST(ZipTest, CancelReachesBothInputs) {
  auto p = FromRange(0, 100).Zip(FromRange(0, 100));
  ASSERT_TRUE(p.Next().ok());
  p.Cancel();
  EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dataecho
