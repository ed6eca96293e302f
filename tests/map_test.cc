// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/map.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "dataecho/internal/map_tuning.h"
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
                         // The first call waits (bounded) for a second one to start: a pool
                         // that runs calls in parallel always lets it, whatever the scheduler
                         // does, and a serial one never does.
                         const auto deadline =
                             std::chrono::steady_clock::now() + std::chrono::seconds(20);
                         while (x == 0 && in_flight.load() < 2 &&
                                std::chrono::steady_clock::now() < deadline) {
                           std::this_thread::sleep_for(std::chrono::microseconds(100));
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
  auto p = FromRange(0, 5).Map(
      [](int64_t x) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        return x;
      },
      {.parallelism = 0});
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
                     .Map(
                         [&](int64_t x) {  // inline: counts what the parallel Map pulls
                           ++pulled;
                           return x;
                         },
                         {.parallelism = 0})
                     .Map([](int64_t x) { return x; }, options)
                     .Release();
    ASSERT_TRUE((*stage)->Next().ok());
    // Then, without the consumer: more results than the calls in flight
    // (1 returned + 2 calls), up to the window (parallelism + buffer; by
    // default three batches of at most kMapMaxBatch per worker).
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

// Whatever the autotuner chooses (its measurements are wall time, which a
// preemption inside fn stretches), the results come in order, and fn runs
// where the stats say: inline (parallelism 0) or on the workers.
TEST(MapTest, AutotuneKeepsOrderWhereverFnRuns) {
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
  const double parallelism = Extra(p.Stats(), "map", "parallelism");
  EXPECT_NE(parallelism, -1);
  EXPECT_EQ(parallelism == 0, elsewhere.load() == 0) << parallelism;
}

// The choice itself, from the figures the Map measures (fed here, so that no
// preemption can stretch them): a call under kAutotuneMinBusyNanos stays
// inline, whatever the cores and the consumer; a costlier one gets the
// workers that keep up with the consumer, at most the cores left; one far
// costlier than a hand-off (kAutotuneAllCoresNanos) gets a worker per core.
TEST(MapAutotunerTest, CheapCallsStayInline) {
  internal::MapAutotuner tuner;
  const int64_t cheap = internal::kAutotuneMinBusyNanos / 10;
  int64_t calls = 0;
  bool chosen = false;
  while (!chosen) {
    tuner.Enter();
    chosen = tuner.Leave(cheap);
    ++calls;
  }
  EXPECT_GE(calls, internal::MapAutotuner::kMinElements);
  EXPECT_EQ(tuner.choice(), 0);

  internal::MapWarmup w{.elements = 1000,
                        .busy_ns = 1000 * (internal::kAutotuneMinBusyNanos - 1),
                        .outside_ns = 0,
                        .wall_ns = 1'000'000'000,
                        .cores = 64};
  EXPECT_EQ(internal::ChooseMapParallelism(w), 0);
  w.busy_ns = 1000 * internal::kAutotuneMinBusyNanos;
  EXPECT_GE(internal::ChooseMapParallelism(w), 1);
}

TEST(MapAutotunerTest, CostlyCallsGetTheWorkersTheConsumerNeedsWithinTheCores) {
  // 20 us per call, the consumer 5 us per element between calls: 4 workers
  // keep up (20 / (5 + hand-off) rounds up to 4).
  internal::MapWarmup w{.elements = 100,
                        .busy_ns = 100 * 20'000,
                        .outside_ns = 100 * 5'000,
                        .wall_ns = 100 * 25'000,
                        .cores = 8};
  w.thread_cpu_ns = 0;  // fn slept: no CPU of the consumer's
  w.process_cpu_ns = 0;
  EXPECT_EQ(internal::ChooseMapParallelism(w), 4);
  w.cores = 2;  // at most the cores
  EXPECT_EQ(internal::ChooseMapParallelism(w), 2);
  w.process_cpu_ns = 2 * w.wall_ns;  // other threads use both cores: none left
  EXPECT_EQ(internal::ChooseMapParallelism(w), 0);
}

// What a Map of JPEG decode + RandomResizedCrop (0.6 ms a call) measured in
// its first 16 calls in imagenet_bench on 2 cores: the TFRecord readers
// filling their read-ahead took 0.8 of a core, and Batch's first row copies
// (faulting its buffer's pages in) made the consumer look slower than fn.
// Within "the cores left" and "what keeps up with the consumer" that was 1
// worker, and one core stayed idle for the whole run; such a fn gets a worker
// per core.
TEST(MapAutotunerTest, CallsFarCostlierThanAHandOffGetAWorkerPerCore) {
  internal::MapWarmup w{.elements = 16,
                        .busy_ns = 9'548'991,
                        .outside_ns = 17'660'574,
                        .wall_ns = 76'311'618,
                        .thread_cpu_ns = 18'764'045,
                        .process_cpu_ns = 81'168'683,
                        .cores = 2};
  EXPECT_EQ(internal::ChooseMapParallelism(w), 2);
  w.cores = 8;
  EXPECT_EQ(internal::ChooseMapParallelism(w), 8);
  w.cores = 1;
  EXPECT_EQ(internal::ChooseMapParallelism(w), 1);
  // Even with the other threads on every core while it measured.
  w.cores = 2;
  w.process_cpu_ns = w.thread_cpu_ns + 2 * w.wall_ns;
  EXPECT_EQ(internal::ChooseMapParallelism(w), 2);
  // A cheap fn beside the same figures stays inline.
  w.busy_ns = w.elements * 1'000;
  EXPECT_EQ(internal::ChooseMapParallelism(w), 0);
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
  // At least 200 us a call, far more than a hand-off: a worker per core.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  EXPECT_EQ(Extra(p.Stats(), "map", "parallelism"), CPU_COUNT(&cpus));
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

// ---- epochs: a parallel Map and a Prefetch start over under a Repeat ----

// (source index, epoch) of each Example.
std::vector<std::pair<uint64_t, uint32_t>> IndexAndEpoch(const std::vector<Example>& v) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (const Example& e : v) out.emplace_back(e.source_index, e.epoch);
  return out;
}

TEST(MapRestartTest, ParallelMapAndPrefetchRepeatInOrder) {
  for (int parallelism : {1, 2, kAutotune}) {
    auto p = FromRange(0, 300)
                 .Map([](int64_t x) { return x * 10; }, {.parallelism = parallelism})
                 .Prefetch({.depth = 8})
                 .Repeat(3);
    ASSERT_TRUE(p.status().ok()) << p.status();
    auto got = Drain(**std::move(p).Release());
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 900u) << parallelism;
    for (size_t i = 0; i < got->size(); ++i) ASSERT_EQ((*got)[i], int64_t(i % 300) * 10) << i;
  }
  // Not deterministic: every element once per epoch.
  auto p = FromRange(0, 300)
               .Map(
                   [](int64_t x) {
                     Jitter(x);
                     return x;
                   },
                   {.parallelism = 2, .deterministic = false})
               .Repeat(2);
  ASSERT_TRUE(p.status().ok()) << p.status();
  auto got = Drain(**std::move(p).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 600u);
  std::vector<int64_t> sorted = *got;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], int64_t(i / 2));
}

// Restarted mid-stream (Take above them ends each epoch early), they drop
// what their threads made ahead: every epoch starts at the first element.
TEST(MapRestartTest, RestartMidStreamDropsWhatRanAhead) {
  for (int parallelism : {0, 1, 2}) {
    for (bool prefetch : {false, true}) {
      auto p = FromRange(0, 100000).Map([](int64_t x) { return x; }, {.parallelism = parallelism});
      if (prefetch) p = std::move(p).Prefetch({.depth = 64});
      auto stage = std::move(p).Take(5).Repeat(4).Release();
      ASSERT_TRUE(stage.ok()) << stage.status();
      auto got = Drain(**stage);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got,
                (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}))
          << parallelism << " " << prefetch;
    }
  }
}

// Seeded determinism across epochs: the same order and epochs as the chain
// without threads.
TEST(MapRestartTest, ThreadsDoNotChangeTheEpochsOutput) {
  auto run = [](int parallelism, bool prefetch) {
    auto p = FromVector(testing::MakeExamples(60))
                 .Shuffle({.buffer_size = 60, .seed = 7})
                 .Map([](Example e) { return e; }, {.parallelism = parallelism});
    if (prefetch) p = std::move(p).Prefetch({.depth = 4});
    auto stage = std::move(p).Repeat(3).Release();
    EXPECT_TRUE(stage.ok()) << stage.status();
    if (!stage.ok()) return std::vector<std::pair<uint64_t, uint32_t>>{};
    auto got = Drain(**stage);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? IndexAndEpoch(*got) : std::vector<std::pair<uint64_t, uint32_t>>{};
  };
  const auto expected = run(0, false);
  ASSERT_EQ(expected.size(), 180u);
  EXPECT_EQ(expected[179].second, 2u);
  EXPECT_EQ(run(2, false), expected);
  EXPECT_EQ(run(2, true), expected);
  EXPECT_EQ(run(0, true), expected);
}

// An fn error in a later epoch comes at its position, after every element
// before it, and stays.
TEST(MapRestartTest, ErrorInALaterEpochComesInOrderAndSticks) {
  for (int parallelism : {0, 2}) {
    auto p = FromVector(testing::MakeExamples(50))
                 .Repeat(3)
                 .Map(
                     [](Example e) -> absl::StatusOr<Example> {
                       if (e.epoch == 1 && e.source_index == 20) {
                         return absl::DataLossError("bad 20");
                       }
                       return e;
                     },
                     {.parallelism = parallelism})
                 .Prefetch({.depth = 4});
    auto stage = std::move(p).Release();
    ASSERT_TRUE(stage.ok());
    auto [items, status] = DrainWithStatus(**stage);
    EXPECT_EQ(items.size(), 70u) << parallelism;
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ((*stage)->Next().status().code(), absl::StatusCode::kDataLoss);
  }
  // Below the Repeat: the Repeat returns the error and stays.
  auto p = FromVector(testing::MakeExamples(50))
               .Map(
                   [calls = std::make_shared<std::atomic<int>>(0)](
                       Example e) -> absl::StatusOr<Example> {
                     if (calls->fetch_add(1) == 70) return absl::DataLossError("call 70");
                     return e;
                   },
                   {.parallelism = 1})
               .Repeat(3);
  auto stage = std::move(p).Release();
  ASSERT_TRUE(stage.ok());
  auto [items, status] = DrainWithStatus(**stage);
  EXPECT_EQ(items.size(), 70u);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
}

// Destroyed at any point of a forever-repeating chain with threads, the
// pipeline returns.
TEST(MapRestartTest, DestroyedMidEpochNeverHangs) {
  for (int pulls : {0, 1, 3, 4, 7, 50}) {
    auto stage = FromRange(0, 1 << 30)
                     .Map([](int64_t x) { return x; }, {.parallelism = 2})
                     .Prefetch({.depth = 8})
                     .Take(4)
                     .Repeat(-1)
                     .Release();
    ASSERT_TRUE(stage.ok());
    for (int i = 0; i < pulls; ++i) {
      auto next = (*stage)->Next();
      ASSERT_TRUE(next.ok() && next->has_value());
      ASSERT_EQ(**next, i % 4);
    }
  }
}

}  // namespace
}  // namespace dataecho
