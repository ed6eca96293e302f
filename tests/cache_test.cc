// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Cache: the input is read once whatever the restarts (epochs replay from
// memory, in order), the byte cap is a RESOURCE_EXHAUSTED error, errors are in
// order and sticky.
#include "dataecho/cache.h"

#include <memory>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::DrainWithStatus;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 0..n-1, counting how many times the source was asked for an element.
StagePtr<int64_t> CountedRange(int64_t n, std::shared_ptr<int64_t> reads) {
  return *GeneratorSource<int64_t>(
      [n, reads, i = int64_t{0}]() mutable -> absl::StatusOr<std::optional<int64_t>> {
        ++*reads;
        if (i == n) return std::nullopt;
        return i++;
      });
}

// What a Repeat stage (stage.h) does to its input between epochs.
absl::Status StartEpoch(Stage<int64_t>& cache, uint32_t epoch) {
  return static_cast<CacheStage<int64_t>&>(cache).Restart(epoch);
}

std::vector<int64_t> ReadAll(Stage<int64_t>& s) {
  auto [items, status] = DrainWithStatus(s);
  EXPECT_TRUE(status.ok()) << status;
  return items;
}

TEST(CacheTest, ReadsTheInputOnceAndReplaysEveryLaterEpoch) {
  auto reads = std::make_shared<int64_t>(0);
  auto cache = CacheStage<int64_t>::Make(CountedRange(5, reads));
  ASSERT_TRUE(cache.ok()) << cache.status();
  ASSERT_TRUE(static_cast<CacheStage<int64_t>&>(**cache).EnableRestart().ok());
  EXPECT_THAT(ReadAll(**cache), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(*reads, 6);  // five elements and the end
  for (uint32_t epoch = 1; epoch <= 3; ++epoch) {
    ASSERT_TRUE(StartEpoch(**cache, epoch).ok());
    EXPECT_THAT(ReadAll(**cache), ElementsAre(0, 1, 2, 3, 4));
  }
  EXPECT_EQ(*reads, 6);  // nothing more read
  std::vector<StageStats> stats;
  (*cache)->AppendStats(&stats);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[1].name, "cache");
  EXPECT_EQ(stats[1].elements, 20);
  EXPECT_EQ(stats[1].Extra("cached"), 5);
  EXPECT_EQ(stats[1].Extra("replayed"), 15);
  EXPECT_EQ(stats[1].Extra("complete"), 1);
  EXPECT_EQ(stats[1].Extra("epoch"), 3);
}

TEST(CacheTest, RestartBeforeTheEndReplaysThenContinuesTheInput) {
  // A Take(3) above the cache restarts it after 3 elements; the next epoch
  // replays those and then reads on from the input, never twice.
  auto reads = std::make_shared<int64_t>(0);
  auto cache = CacheStage<int64_t>::Make(CountedRange(6, reads));
  ASSERT_TRUE(cache.ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(**(*cache)->Next(), i);
  ASSERT_TRUE(StartEpoch(**cache, 1).ok());
  EXPECT_THAT(ReadAll(**cache), ElementsAre(0, 1, 2, 3, 4, 5));
  ASSERT_TRUE(StartEpoch(**cache, 2).ok());
  EXPECT_THAT(ReadAll(**cache), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(*reads, 7);
}

TEST(CacheTest, SharesPayloadsInsteadOfCopying) {
  auto cache = FromVector(testing::MakeExamples(4, 1024)).Cache().Release();
  ASSERT_TRUE(cache.ok());
  auto [first, status] = DrainWithStatus(**cache);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(static_cast<CacheStage<Example>&>(**cache).Restart(1).ok());
  for (const Example& e : first) {
    auto r = (*cache)->Next();
    ASSERT_TRUE(r.ok() && r->has_value());
    EXPECT_EQ((*r)->source_index, e.source_index);
    EXPECT_TRUE((*r)->components[0].buffer().SharesStorageWith(e.components[0].buffer()));
  }
  std::vector<StageStats> stats;
  (*cache)->AppendStats(&stats);
  EXPECT_EQ(stats.back().Extra("cached_bytes"), 4 * 1024);
}

TEST(CacheTest, OverTheByteCapIsResourceExhaustedAfterTheElementsThatFit) {
  // 16-byte examples, a 50-byte cap: three fit, the fourth does not.
  auto cache = FromVector(testing::MakeExamples(10, 16)).Cache({.max_bytes = 50}).Release();
  ASSERT_TRUE(cache.ok());
  auto [items, status] = DrainWithStatus(**cache);
  EXPECT_EQ(items.size(), 3u);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("max_bytes = 50"));
  EXPECT_EQ((*cache)->Next().status().code(), absl::StatusCode::kResourceExhausted);  // sticky
  EXPECT_EQ(static_cast<CacheStage<Example>&>(**cache).Restart(1).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(CacheTest, NoCapWhenZero) {
  auto cache = FromVector(testing::MakeExamples(100, 4096)).Cache({.max_bytes = 0}).Release();
  ASSERT_TRUE(cache.ok());
  auto [items, status] = DrainWithStatus(**cache);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(items.size(), 100u);
}

TEST(CacheTest, InputErrorComesInOrderAndStays) {
  int64_t i = 0;
  auto cache = FromGenerator<int64_t>([&i]() -> absl::StatusOr<std::optional<int64_t>> {
                 if (i == 3) return absl::DataLossError("bad record at mem://x:3");
                 return i++;
               })
                   .Cache()
                   .Release();
  ASSERT_TRUE(cache.ok());
  auto [items, status] = DrainWithStatus(**cache);
  EXPECT_THAT(items, ElementsAre(0, 1, 2));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(StartEpoch(**cache, 1).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ((*cache)->Next().status().code(), absl::StatusCode::kDataLoss);
}

TEST(CacheTest, RejectsNegativeCapAndNullInput) {
  auto p = FromRange(0, 3).Cache({.max_bytes = -1});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("max_bytes must be >= 0"));
  EXPECT_EQ(CacheStage<int64_t>::Make(nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CacheTest, CancelStopsReplayToo) {
  auto cache = FromRange(0, 3).Cache().Release();
  ASSERT_TRUE(cache.ok());
  ReadAll(**cache);
  ASSERT_TRUE(StartEpoch(**cache, 1).ok());
  (*cache)->Cancel();
  EXPECT_EQ((*cache)->Next().status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dataecho
