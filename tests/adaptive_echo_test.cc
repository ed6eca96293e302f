// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Adaptive echo, tested by counts: sources whose readiness the test controls
// (GatedSource) or that run on a simulated clock (SimulatedSource).
#include "dataecho/adaptive_echo.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/gated_sources.h"

namespace dataecho {
namespace {

using testing::GatedSource;
using testing::MakeExample;
using testing::MakeExamples;
using testing::SimulatedSource;
using Seen = std::vector<std::pair<uint64_t, uint32_t>>;  // (source_index, repeat_index)

struct Gated {
  GatedSource<Example>* source;
  StagePtr<Example> echo;
};

Gated MakeGated(AdaptiveEchoOptions options) {
  auto source = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* raw = source.get();
  auto echo = AdaptiveEchoStage<Example>::Make(std::move(source), std::move(options));
  EXPECT_TRUE(echo.ok()) << echo.status();
  return {raw, *std::move(echo)};
}

void Push(GatedSource<Example>& s, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin; i < end; ++i) s.Push(MakeExample(i));
}

// Serves at most n requests while the stage can without waiting.
Seen TakeN(Stage<Example>& stage, int n) {
  Seen seen;
  absl::StatusOr<std::optional<Example>> r;
  for (int i = 0; i < n && stage.TryNext(&r); ++i) {
    EXPECT_TRUE(r.ok() && r->has_value());
    if (!r.ok() || !r->has_value()) break;
    seen.emplace_back((*r)->source_index, (*r)->repeat_index);
  }
  return seen;
}

Seen TakeReady(Stage<Example>& stage) { return TakeN(stage, 1 << 30); }

const StageStats& EchoStats(const Stage<Example>& stage, std::vector<StageStats>& storage) {
  storage.clear();
  stage.AppendStats(&storage);
  return storage.back();
}

TEST(AdaptiveEchoTest, ReadyUpstreamMeansNoRepeats) {
  // A synchronous source is always ready.
  auto p = FromVector(MakeExamples(1000)).AdaptiveEcho({.max_factor = 4});
  ASSERT_TRUE(p.status().ok());
  for (uint64_t i = 0; i < 1000; ++i) {
    auto r = p.Next();
    ASSERT_TRUE(r.ok() && r->has_value());
    EXPECT_EQ((*r)->source_index, i);
    EXPECT_TRUE((*r)->fresh());
  }
  EXPECT_FALSE(p.Next()->has_value());
  EXPECT_FALSE(p.Next()->has_value());  // end of stream stays
  const StageStats echo = p.Stats().back();
  EXPECT_EQ(echo.elements, 1000);
  EXPECT_EQ(echo.Extra("fresh"), 1000);
  EXPECT_EQ(echo.Extra("repeats"), 0);
  EXPECT_EQ(echo.Extra("realized_factor"), 1.0);
  EXPECT_EQ(echo.Extra("stalls"), 0);
}

TEST(AdaptiveEchoTest, StalledUpstreamRepeatsUpToMaxSpreadEvenlyThenBlocks) {
  Gated g = MakeGated({.max_factor = 3, .pool_size = 8});
  Push(*g.source, 0, 3);
  // Fresh items first, then repeats: fewest emissions first, oldest among equals.
  const Seen expected = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
  EXPECT_EQ(TakeReady(*g.echo), expected);
  absl::StatusOr<std::optional<Example>> r;
  EXPECT_FALSE(g.echo->TryNext(&r));  // every item used its budget of 3

  // Next() now waits for the upstream.
  std::optional<uint64_t> got;
  std::thread consumer([&] {
    auto next = g.echo->Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    got = (*next)->source_index;
  });
  g.source->AwaitWaiting(1);
  g.source->Push(MakeExample(3));
  consumer.join();
  EXPECT_EQ(got, 3u);

  std::vector<StageStats> storage;
  const StageStats& s = EchoStats(*g.echo, storage);
  EXPECT_EQ(s.elements, 10);
  EXPECT_EQ(s.Extra("fresh"), 4);
  EXPECT_EQ(s.Extra("repeats"), 6);
  EXPECT_DOUBLE_EQ(s.Extra("realized_factor"), 2.5);
  EXPECT_DOUBLE_EQ(s.Extra("repeat_fraction"), 0.6);
  EXPECT_EQ(s.Extra("stalls"), 1);
  EXPECT_EQ(s.Extra("evicted"), 0);
  EXPECT_EQ(s.Extra("pooled"), 1);  // item 3, with budget left
  EXPECT_EQ(s.bytes, 10 * 16);
}

TEST(AdaptiveEchoTest, ANewItemIsRepeatedBeforeOlderOnesWithMoreEmissions) {
  Gated g = MakeGated({.max_factor = 4, .pool_size = 8});
  Push(*g.source, 0, 1);
  EXPECT_EQ(TakeN(*g.echo, 2), (Seen{{0, 0}, {0, 1}}));
  Push(*g.source, 1, 2);
  const Seen expected = {{1, 0}, {1, 1}, {0, 2}, {1, 2}, {0, 3}, {1, 3}};
  EXPECT_EQ(TakeReady(*g.echo), expected);
}

TEST(AdaptiveEchoTest, NeverMoreThanMaxFactorEmissionsPerItem) {
  for (double m : {1.0, 1.5, 2.0, 2.5, 3.7, 8.0}) {
    Gated g = MakeGated({.max_factor = m, .pool_size = 16, .seed = 9});
    std::map<uint64_t, int> counts;
    std::mt19937 rng(static_cast<uint32_t>(m * 10));
    uint64_t pushed = 0;
    for (int round = 0; round < 300; ++round) {
      const uint64_t n = rng() % 4;
      Push(*g.source, pushed, pushed + n);
      pushed += n;
      for (const auto& [index, k] : TakeReady(*g.echo)) {
        ++counts[index];
        EXPECT_LT(k, std::ceil(m)) << "m=" << m;
      }
    }
    EXPECT_EQ(counts.size(), pushed);
    for (const auto& [index, n] : counts)
      ASSERT_LE(n, std::ceil(m)) << "m=" << m << " item " << index;
  }
}

TEST(AdaptiveEchoTest, FractionalMaxFactorBudgetsMatchEchoStageDraws) {
  constexpr uint64_t kItems = 2000;
  // Fully stalled upstream: one item at a time, each repeated to its budget.
  Gated g = MakeGated({.max_factor = 2.5, .pool_size = 4, .seed = 21});
  std::map<uint64_t, int> adaptive;
  for (uint64_t i = 0; i < kItems; ++i) {
    Push(*g.source, i, i + 1);
    for (const auto& [index, k] : TakeReady(*g.echo)) ++adaptive[index];
  }
  auto fixed = FromVector(MakeExamples(kItems)).Echo({.factor = 2.5, .seed = 21});
  absl::StatusOr<std::map<uint64_t, int>> echo = testing::CountBySourceIndex(fixed);
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_EQ(adaptive, *echo);
  int threes = 0;
  for (const auto& [index, n] : adaptive) threes += n == 3;
  EXPECT_GT(threes, 800);
  EXPECT_LT(threes, 1200);
}

TEST(AdaptiveEchoTest, FullPoolEvictsTheOldestItem) {
  Gated g = MakeGated({.max_factor = 4, .pool_size = 2});
  Push(*g.source, 0, 3);
  // Item 0 leaves when item 2 arrives; only 1 and 2 are repeated.
  const Seen expected = {{0, 0}, {1, 0}, {2, 0}, {1, 1}, {2, 1}, {1, 2}, {2, 2}, {1, 3}, {2, 3}};
  EXPECT_EQ(TakeReady(*g.echo), expected);
  std::vector<StageStats> storage;
  const StageStats& s = EchoStats(*g.echo, storage);
  EXPECT_EQ(s.Extra("evicted"), 1);
  EXPECT_EQ(s.Extra("pooled"), 0);  // 1 and 2 used their budgets and left
}

TEST(AdaptiveEchoTest, MinFreshFractionCapsRepeats) {
  Gated g = MakeGated({.max_factor = 8, .min_fresh_fraction = 0.5});
  for (uint64_t i = 0; i < 5; ++i) {
    Push(*g.source, i, i + 1);
    EXPECT_EQ(TakeReady(*g.echo), (Seen{{i, 0}, {i, 1}}));
  }
  std::thread consumer([&] { EXPECT_TRUE(g.echo->Next().ok()); });
  g.source->AwaitWaiting(1);
  g.source->Push(MakeExample(5));
  consumer.join();
  std::vector<StageStats> storage;
  const StageStats& s = EchoStats(*g.echo, storage);
  EXPECT_EQ(s.Extra("floor_waits"), 1);
  EXPECT_EQ(s.Extra("stalls"), 0);
  EXPECT_EQ(s.Extra("repeats"), 5);
}

TEST(AdaptiveEchoTest, ErrorArrivesAfterEarlierItemsAndSticks) {
  Gated g = MakeGated({.max_factor = 3});
  Push(*g.source, 0, 2);
  g.source->Push(absl::DataLossError("corrupted record at mem://gated:2"));
  // The error is ready upstream: it is served as soon as the items before it.
  EXPECT_EQ(TakeN(*g.echo, 2), (Seen{{0, 0}, {1, 0}}));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(g.echo->Next().status().code(), absl::StatusCode::kDataLoss);

  // Through a real Prefetch: every item before the error arrives, then the error.
  constexpr int64_t k = 300;
  auto p =
      FromGenerator<Example>([i = int64_t{0}]() mutable -> absl::StatusOr<std::optional<Example>> {
        if (i == k) return absl::DataLossError("corrupted record at mem://source:300");
        return MakeExample(static_cast<uint64_t>(i++));
      })
          .Prefetch({.depth = 4})
          .AdaptiveEcho({.max_factor = 3});
  std::map<uint64_t, int> counts;
  absl::Status status;
  while (true) {
    auto r = p.Next();
    if (!r.ok()) {
      status = r.status();
      break;
    }
    ASSERT_TRUE(r->has_value());
    ++counts[(*r)->source_index];
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(counts.size(), static_cast<size_t>(k));
  EXPECT_EQ(counts.rbegin()->first, static_cast<uint64_t>(k - 1));
  for (const auto& [index, n] : counts) EXPECT_LE(n, 3) << index;
  EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kDataLoss);
}

TEST(AdaptiveEchoTest, CancelWakesAConsumerBlockedOnTheUpstream) {
  Gated g = MakeGated({.max_factor = 2});
  absl::Status status;
  std::thread consumer([&] { status = g.echo->Next().status(); });
  g.source->AwaitWaiting(1);
  g.echo->Cancel();
  consumer.join();  // a hang fails through the ctest TIMEOUT
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(g.echo->Next().status().code(), absl::StatusCode::kCancelled);

  // A real upstream that takes 5 s per item, behind a Prefetch.
  auto p = FromVector(MakeExamples(10))
               .Throttle({.latency = absl::Seconds(5)})
               .Prefetch({.depth = 2})
               .AdaptiveEcho({.max_factor = 2});
  absl::Status last;
  std::thread blocked([&] { last = p.Next().status(); });
  std::this_thread::sleep_for(
      std::chrono::milliseconds(20));  // usually blocked by now; either way it must end
  p.Cancel();
  blocked.join();
  EXPECT_EQ(last.code(), absl::StatusCode::kCancelled);
}

TEST(AdaptiveEchoTest, DestroyingWhileTheUpstreamRunsReturns) {
  for (int i = 0; i < 50; ++i) {
    auto p = FromVector(MakeExamples(1000))
                 .Throttle({.latency = absl::Microseconds(200)})
                 .Prefetch({.depth = 4})
                 .AdaptiveEcho({.max_factor = 4, .pool_size = 8});
    for (int r = 0; r < i % 5; ++r) ASSERT_TRUE(p.Next().ok());
  }
}

TEST(AdaptiveEchoTest, RecordedDecisionsReplayTheSameOutput) {
  std::string decisions;
  Gated g =
      MakeGated({.max_factor = 2.5, .pool_size = 5, .seed = 4, .record_decisions = &decisions});
  std::mt19937 rng(7);
  Seen recorded;
  uint64_t pushed = 0;
  for (int round = 0; round < 400; ++round) {
    const uint64_t n = rng() % 3;
    Push(*g.source, pushed, pushed + n);
    pushed += n;
    absl::StatusOr<std::optional<Example>> r;
    for (uint32_t k = rng() % 4; k > 0 && g.echo->TryNext(&r); --k) {
      ASSERT_TRUE(r.ok() && r->has_value());
      recorded.emplace_back((*r)->source_index, (*r)->repeat_index);
    }
  }
  ASSERT_EQ(decisions.size(), recorded.size());
  ASSERT_NE(decisions.find('R'), std::string::npos);
  ASSERT_NE(decisions.find('F'), std::string::npos);

  // Replayed on an always-ready source (so adaptive would never repeat).
  auto replay =
      FromVector(MakeExamples(static_cast<int64_t>(pushed)))
          .AdaptiveEcho(
              {.max_factor = 2.5, .pool_size = 5, .seed = 4, .replay_decisions = decisions});
  Seen replayed;
  for (size_t i = 0; i < recorded.size(); ++i) {
    auto r = replay.Next();
    ASSERT_TRUE(r.ok() && r->has_value());
    replayed.emplace_back((*r)->source_index, (*r)->repeat_index);
  }
  EXPECT_EQ(replayed, recorded);

  // A decision sequence that does not fit the input fails.
  auto bad = FromVector(MakeExamples(3)).AdaptiveEcho({.max_factor = 2, .replay_decisions = "FRR"});
  EXPECT_TRUE(bad.Next().ok());
  EXPECT_TRUE(bad.Next().ok());
  EXPECT_EQ(bad.Next().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(bad.Next().status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(AdaptiveEchoTest, BatchEchoingMarksRepeatedBatches) {
  auto batches = FromVector(MakeExamples(12)).Batch({.batch_size = 4}).Release();
  ASSERT_TRUE(batches.ok());
  auto source = std::make_unique<GatedSource<Batch>>();
  absl::StatusOr<std::vector<Batch>> drained = testing::Drain(**batches);
  ASSERT_TRUE(drained.ok());
  for (Batch& b : *drained) source->Push(std::move(b));
  auto echo = AdaptiveEchoStage<Batch>::Make(std::move(source), {.max_factor = 2});
  ASSERT_TRUE(echo.ok());
  std::vector<Batch> out;
  absl::StatusOr<std::optional<Batch>> r;
  while ((*echo)->TryNext(&r)) out.push_back(**r);
  ASSERT_EQ(out.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out[i].repeat_index, i < 3 ? 0u : 1u);
    EXPECT_EQ(out[i].fresh_rows, i < 3 ? 4 : 0);
    EXPECT_EQ(out[i].num_rows, 4);
  }
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].components[0].buffer().data(), out[i + 3].components[0].buffer().data());
  }
}

TEST(AdaptiveEchoTest, InvalidOptionsAreRejected) {
  const std::vector<AdaptiveEchoOptions> bad = {
      {.max_factor = 0.5}, {.max_factor = std::nan("")}, {.max_factor = 1e9},
      {.pool_size = 0},    {.min_fresh_fraction = -0.1}, {.min_fresh_fraction = 1.5},
      {.rate_window = 0},  {.rate_smoothing = 0},        {.replay_decisions = "FRX"},
  };
  for (const AdaptiveEchoOptions& o : bad) {
    auto p = FromVector(MakeExamples(3)).AdaptiveEcho(o);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
  }
}

}  // namespace
}  // namespace dataecho

namespace dataecho {
namespace {

TEST(AdaptiveEchoGateTest, ClosedGateWaitsForAFreshItemInsteadOfRepeating) {
  std::atomic<bool> open{false};
  std::atomic<int> gate_calls{0};
  Gated g = MakeGated({.max_factor = 3,
                       .pool_size = 8,
                       .repeat_gate =
                           [&] {
                             gate_calls.fetch_add(1);
                             return open.load();
                           },
                       .gate_poll = absl::Microseconds(50)});
  Push(*g.source, 0, 3);
  EXPECT_EQ(TakeReady(*g.echo), (Seen{{0, 0}, {1, 0}, {2, 0}}));  // no repeat while closed

  // Next() polls (the gate is asked again) and takes the next fresh item.
  std::optional<Seen::value_type> got;
  std::thread consumer([&] {
    auto next = g.echo->Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    got.emplace((*next)->source_index, (*next)->repeat_index);
  });
  while (gate_calls.load() < 3) std::this_thread::sleep_for(std::chrono::microseconds(50));
  g.source->Push(MakeExample(3));
  consumer.join();
  EXPECT_EQ(got, Seen::value_type(3, 0));

  open = true;  // now repeats flow, fewest emissions first
  EXPECT_EQ(TakeN(*g.echo, 4), (Seen{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));

  std::vector<StageStats> storage;
  const StageStats& s = EchoStats(*g.echo, storage);
  EXPECT_EQ(s.Extra("fresh"), 4);
  EXPECT_EQ(s.Extra("repeats"), 4);
  EXPECT_EQ(s.Extra("gate_waits"), 1);

  // Cancel ends a gated wait.
  open = false;
  std::thread blocked(
      [&] { EXPECT_EQ(g.echo->Next().status().code(), absl::StatusCode::kCancelled); });
  while (gate_calls.load() < 12) std::this_thread::sleep_for(std::chrono::microseconds(50));
  g.echo->Cancel();
  blocked.join();  // a hang fails through the ctest TIMEOUT
}

// Waits until `done()` holds: true, or false after a minute (a guard against
// a hang, never a measure: every caller waits for what must come).
template <typename F>
bool WaitUntil(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// The gate on a trainer-side Prefetch's level: once two batches are queued,
// the producer builds only fresh rows until the trainer takes some. The test
// releases the upstream's items itself, and each batch takes the Prefetch's
// producer at least kRunNanos to pull, so it pushes every batch before it
// pulls the next (internal/run_ahead.h) and the level the gate reads
// is never behind what was built.
TEST(AdaptiveEchoGateTest, PrefetchLevelGateRepeatsOnlyWhileTheTrainerQueueIsShort) {
  auto level = std::make_shared<std::atomic<int64_t>>(0);
  std::atomic<int64_t> closed{0};  // gate calls answered "closed"
  auto source = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* gated = source.get();
  Push(*gated, 0, 4);  // one batch of fresh items, 3 repeats each (12)
  auto p =
      Pipeline<Example>(StagePtr<Example>(std::move(source)))
          .AdaptiveEcho({.max_factor = 4,
                         .pool_size = 16,
                         .repeat_gate =
                             [level, &closed] {
                               if (level->load() < 2) return true;
                               closed.fetch_add(1);
                               return false;
                             }})
          .Batch({.batch_size = 4})
          .Map([](Batch b) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(internal::RunAhead::kRunNanos));
            return b;
          })
          .Prefetch({.depth = 4, .level = level});
  ASSERT_TRUE(p.status().ok());
  auto first = p.Next();  // starts the producer; from here on the level only grows
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->fresh_rows, 4);
  // Two batches of repeats follow while fewer than 2 are queued; then the
  // gate stays closed and the producer polls it, with repeats still pooled.
  // (Two more closed answers: the second is a poll of the gated wait, so the
  // wait was counted before it.)
  ASSERT_TRUE(WaitUntil([&] { return level->load() >= 2; }));
  const int64_t seen = closed.load();
  ASSERT_TRUE(WaitUntil([&] { return closed.load() >= seen + 2; }))
      << "the producer does not wait at the closed gate";
  StageStats echo = p.Stats()[p.Stats().size() - 4];
  ASSERT_EQ(echo.name, "adaptive_echo");
  EXPECT_EQ(echo.Extra("fresh"), 4);
  EXPECT_EQ(echo.Extra("repeats"), 8);
  EXPECT_EQ(echo.Extra("pooled"), 4);  // each item has one repeat left
  EXPECT_GE(echo.Extra("gate_waits"), 1);

  // Eight fresh items: two batches of them, not one of the pooled repeats.
  Push(*gated, 4, 12);
  ASSERT_TRUE(WaitUntil([&] { return level->load() >= 4; }));
  std::vector<int64_t> fresh_rows;
  std::vector<int64_t> first_rows;
  for (int i = 0; i < 4; ++i) {
    auto b = p.Next();
    ASSERT_TRUE(b.ok() && b->has_value());
    fresh_rows.push_back((*b)->fresh_rows);
    first_rows.push_back((*b)->source_indices.data<int64_t>()[0]);
  }
  EXPECT_EQ(fresh_rows, (std::vector<int64_t>{0, 0, 4, 4}));
  EXPECT_EQ(first_rows[2], 4);
  EXPECT_EQ(first_rows[3], 8);
  EXPECT_EQ(p.Stats()[p.Stats().size() - 4].Extra("fresh"), 12);
}

}  // namespace
}  // namespace dataecho
