// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/map.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::Drain;
using testing::DrainWithStatus;

void Jitter(int64_t x) {  // uneven work so workers finish out of order
  std::this_thread::sleep_for(std::chrono::microseconds((x * 7919) % 300));
}

TEST(MapTest, ParallelResultsComeInInputOrder) {
  for (int parallelism : {0, 1, 4}) {
    auto stage = FromRange(0, 500)
                     .Map(
                         [](int64_t x) {
                           Jitter(x);
                           return x * 2;
                         },
                         {.parallelism = parallelism})
                     .Release();
    std::vector<int64_t> out = *Drain(**stage);
    ASSERT_EQ(out.size(), 500u);
    for (int64_t i = 0; i < 500; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], 2 * i) << parallelism;
  }
}

TEST(MapTest, NonDeterministicModeDeliversEveryElementOnce) {
  auto stage = FromRange(0, 500)
                   .Map(
                       [](int64_t x) {
                         Jitter(x);
                         return x;
                       },
                       {.parallelism = 4, .deterministic = false})
                   .Release();
  std::vector<int64_t> out = *Drain(**stage);
  std::sort(out.begin(), out.end());
  ASSERT_EQ(out.size(), 500u);
  for (int64_t i = 0; i < 500; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], i);
}

TEST(MapTest, NeverMoreCallsInFlightThanParallelism) {
  std::atomic<int> in_flight{0}, peak{0};
  auto stage = FromRange(0, 200)
                   .Map(
                       [&](int64_t x) {
                         const int now = ++in_flight;
                         int p = peak.load();
                         while (now > p && !peak.compare_exchange_weak(p, now)) {
                         }
                         Jitter(x);
                         --in_flight;
                         return x;
                       },
                       {.parallelism = 3})
                   .Release();
  ASSERT_EQ(Drain(**stage)->size(), 200u);
  EXPECT_LE(peak.load(), 3);
  EXPECT_GE(peak.load(), 2);  // the pool does run in parallel
}

TEST(MapTest, FunctionErrorComesAtItsPositionAndSticks) {
  for (int parallelism : {0, 4}) {
    auto stage = FromRange(0, 100)
                     .Map(
                         [](int64_t x) -> absl::StatusOr<int64_t> {
                           Jitter(x);
                           if (x == 37) return absl::DataLossError("bad element 37");
                           return x;
                         },
                         {.parallelism = parallelism})
                     .Release();
    auto [items, status] = DrainWithStatus(**stage);
    ASSERT_EQ(items.size(), 37u) << parallelism;
    for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(items[static_cast<size_t>(i)], i);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ((*stage)->Next().status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(MapTest, InvalidParallelism) {
  EXPECT_EQ(FromRange(0, 1).Map([](int64_t x) { return x; }, {.parallelism = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PrefetchTest, DeliversEverythingAndTryNextDoesNotBlock) {
  std::atomic<bool> release{false};
  auto stage = FromRange(0, 1000)
                   .Map([&](int64_t x) {
                     while (x == 0 && !release.load()) std::this_thread::yield();
                     return x;
                   })
                   .Prefetch({.depth = 8})
                   .Release();
  absl::StatusOr<std::optional<int64_t>> out;
  EXPECT_FALSE((*stage)->TryNext(&out));  // the producer is stuck on element 0
  release = true;
  std::vector<int64_t> all = *Drain(**stage);
  ASSERT_EQ(all.size(), 1000u);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(all[static_cast<size_t>(i)], i);
  EXPECT_TRUE((*stage)->TryNext(&out));
  EXPECT_TRUE(out.ok() && !out->has_value());
}

TEST(PrefetchTest, QueueIsBounded) {
  std::atomic<int64_t> pulled{0};
  auto stage = FromRange(0, 1000)
                   .Map([&](int64_t x) {
                     ++pulled;
                     return x;
                   })
                   .Prefetch({.depth = 5})
                   .Release();
  ASSERT_TRUE((*stage)->Next().ok());
  while (pulled.load() < 6) std::this_thread::yield();  // the producer fills the queue
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // Then stops: 1 consumed + 5 queued + 1 in the producer's hands + Map's in-flight call.
  EXPECT_LE(pulled.load(), 8);
}

}  // namespace
}  // namespace dataecho
