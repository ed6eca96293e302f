// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/map.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string_view>
#include <thread>
#include <vector>

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

// The value of the stats extra `key` of the stage named `stage`, or -1.
double Extra(const std::vector<StageStats>& stats, std::string_view stage, std::string_view key) {
  for (const StageStats& s : stats) {
    if (s.name == stage) return s.Extra(key, -1);
  }
  return -1;
}

TEST(MapTest, DefaultIsInlineInTheConsumersThread) {
  const std::thread::id consumer = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  auto p = FromRange(0, 100).Map([&](int64_t x) {
    if (std::this_thread::get_id() != consumer) ++elsewhere;
    return x;
  });
  auto stage = std::move(p).Release();
  ASSERT_EQ(Drain(**stage)->size(), 100u);
  EXPECT_EQ(elsewhere.load(), 0);
}

TEST(MapTest, InlineMapReportsItsBusyTime) {
  auto p = FromRange(0, 5).Map([](int64_t x) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    return x;
  });
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(p.Next().ok());
  const std::vector<StageStats> stats = p.Stats();
  EXPECT_EQ(Extra(stats, "map", "parallelism"), 0);
  EXPECT_GE(Extra(stats, "map", "busy_s"), 5 * 500e-6);  // fn slept this long, at least
}

// Waits (up to 20 s) until `done()` holds; false if it never did.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 20000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

TEST(MapTest, ParallelResultsRunAheadOfTheConsumerWithinTheWindow) {
  for (const MapOptions& options :
       {MapOptions{.parallelism = 2}, MapOptions{.parallelism = 2, .buffer = 3}}) {
    std::atomic<int64_t> pulled{0};
    auto stage = FromRange(0, 20000)
                     .Map([&](int64_t x) {  // inline: counts what the parallel Map pulls
                       ++pulled;
                       return x;
                     })
                     .Map([](int64_t x) { return x; }, options)
                     .Release();
    ASSERT_TRUE((*stage)->Next().ok());
    // Then, without the consumer: more results than the calls in flight
    // (1 returned + 2 calls), up to the window (parallelism + buffer; by
    // default two batches of at most kMapMaxBatch per worker).
    const int64_t window = internal::MapWindow(2, options.buffer, internal::kMapMaxBatch);
    ASSERT_TRUE(Eventually([&] { return pulled.load() >= std::min<int64_t>(4, 1 + window); }))
        << options.buffer;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LE(pulled.load(), 1 + window) << options.buffer;
    std::vector<int64_t> rest = *Drain(**stage);
    ASSERT_EQ(rest.size(), 19999u);
    for (size_t i = 0; i < rest.size(); ++i) ASSERT_EQ(rest[i], static_cast<int64_t>(i) + 1);
  }
}

TEST(MapTest, AutotuneKeepsCheapFunctionsInline) {
  const std::thread::id consumer = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  auto p = FromRange(0, 200000).Map(
      [&](int64_t x) {
        if (std::this_thread::get_id() != consumer) ++elsewhere;
        return x + 1;
      },
      {.parallelism = kAutotune});
  int64_t expected = 1;
  while (true) {
    auto next = p.Next();
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
    ASSERT_EQ(**next, expected++);
  }
  EXPECT_EQ(expected, 200001);
  EXPECT_EQ(elsewhere.load(), 0);
  EXPECT_EQ(Extra(p.Stats(), "map", "parallelism"), 0);
}

TEST(MapTest, AutotuneMovesExpensiveFunctionsToWorkersInOrder) {
  const std::thread::id consumer = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  auto p = FromRange(0, 400).Map(
      [&](int64_t x) {
        if (std::this_thread::get_id() != consumer) ++elsewhere;
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // 200 us of "work"
        return x * 3;
      },
      {.parallelism = kAutotune});
  int64_t i = 0;
  while (true) {
    auto next = p.Next();
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
    ASSERT_EQ(**next, 3 * i++);
  }
  EXPECT_EQ(i, 400);
  EXPECT_GE(Extra(p.Stats(), "map", "parallelism"), 1);
  EXPECT_GT(elsewhere.load(), 0);
}

TEST(MapTest, InvalidBuffer) {
  EXPECT_EQ(FromRange(0, 1)
                .Map([](int64_t x) { return x; }, {.parallelism = 1, .buffer = -1})
                .status()
                .code(),
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
