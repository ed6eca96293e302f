// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Adaptive and auto echo on a simulated clock: the upstream delivers item n
// at tick R * (n + 1), every consumer step takes one tick, and the stages
// measure time on the same clock. So the speedups, realized factors and R̂
// are exact counts, independent of the machine.
#include "dataecho/auto_echo.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "dataecho/adaptive_echo.h"
#include "dataecho/echo.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/gated_sources.h"

namespace dataecho {
namespace {

using testing::MakeExamples;
using testing::SimulatedSource;

constexpr int64_t kTickNs = 1000;

struct SimRun {
  int64_t steps = 0;  // elements consumed
  int64_t ticks = 0;  // simulated time they took
  int64_t fresh = 0;  // items the upstream produced
  std::vector<std::pair<uint64_t, uint32_t>> seen;
  StageStats stats;

  // Elements per upstream item-time: the speedup over no echoing.
  double Speedup(int64_t r) const {
    return static_cast<double>(steps) * r / static_cast<double>(ticks);
  }
};

// Runs `steps` consumer steps of one tick each through the stage `make`
// builds on a SimulatedSource with ratio r.
template <typename Make>
SimRun Simulate(int64_t r, int64_t steps, Make make) {
  int64_t tick = 0;
  auto source = std::make_unique<SimulatedSource>(tick, r);
  SimulatedSource* raw = source.get();
  absl::StatusOr<StagePtr<Example>> stage =
      make(std::move(source), [&tick] { return tick * kTickNs; });
  EXPECT_TRUE(stage.ok()) << stage.status();
  SimRun run;
  for (; run.steps < steps; ++run.steps) {
    auto x = (*stage)->Next();
    EXPECT_TRUE(x.ok() && x->has_value());
    run.seen.emplace_back((*x)->source_index, (*x)->repeat_index);
    ++tick;  // the consumer's step
  }
  run.ticks = tick;
  run.fresh = raw->produced();
  std::vector<StageStats> stats;
  (*stage)->AppendStats(&stats);
  run.stats = stats.back();
  return run;
}

SimRun SimulateAdaptive(int64_t r, double m, int64_t steps, int64_t pool_size = 64) {
  return Simulate(r, steps, [&](StagePtr<Example> in, std::function<int64_t()> clock) {
    return AdaptiveEchoStage<Example>::Make(
        std::move(in), {.max_factor = m, .pool_size = pool_size, .clock = std::move(clock)});
  });
}

// The bar, on the simulated clock: 300 steps.
TEST(AdaptiveEchoSimulationTest, RealizedFactorFollowsTheUpstream) {
  // R = 1: every request finds a fresh item.
  SimRun r1 = SimulateAdaptive(1, 8, 300);
  EXPECT_EQ(r1.stats.Extra("repeats"), 0);
  EXPECT_EQ(r1.stats.Extra("realized_factor"), 1.0);
  EXPECT_DOUBLE_EQ(r1.stats.Extra("rate_ratio"), 1.0);
  EXPECT_EQ(r1.ticks, 301);  // one initial wait, then no idle tick

  // R = 3, m = 8: three emissions per item, the consumer never idles after the first item.
  SimRun r3 = SimulateAdaptive(3, 8, 300);
  EXPECT_EQ(r3.ticks, 303);
  EXPECT_EQ(r3.fresh, 100);
  EXPECT_EQ(r3.stats.Extra("stalls"), 1);
  EXPECT_DOUBLE_EQ(r3.stats.Extra("realized_factor"), 3.0);
  EXPECT_DOUBLE_EQ(r3.stats.Extra("rate_ratio"), 3.0);
  EXPECT_GE(r3.Speedup(3) / 3.0, 0.95);

  // R = 6, m = 4: four emissions per item, then a wait of two ticks.
  SimRun r6 = SimulateAdaptive(6, 4, 300);
  EXPECT_DOUBLE_EQ(r6.stats.Extra("realized_factor"), 4.0);
  EXPECT_EQ(r6.stats.Extra("stalls"), 75);
  EXPECT_EQ(r6.ticks, 6 * 75 + 4);  // item 74 arrives at tick 450, then its four steps
  EXPECT_DOUBLE_EQ(r6.stats.Extra("rate_ratio"), 6.0);
  EXPECT_GE(r6.Speedup(6) / 4.0, 0.95);
}

TEST(AdaptiveEchoSimulationTest, MatchesTheIdealSpeedupForEveryRatio) {
  for (int64_t r : {1, 2, 3, 4, 6, 8}) {
    for (double m : {1.0, 2.0, 3.0, 4.0, 8.0}) {
      const double ideal = std::min<double>(static_cast<double>(r), m);
      SimRun run = SimulateAdaptive(r, m, 4000);
      EXPECT_NEAR(run.Speedup(r), ideal, 0.01 * ideal) << "R=" << r << " m=" << m;
      EXPECT_NEAR(run.stats.Extra("realized_factor"), ideal, 0.01 * ideal)
          << "R=" << r << " m=" << m;
      EXPECT_NEAR(run.stats.Extra("rate_ratio"), static_cast<double>(r), 1e-9)
          << "R=" << r << " m=" << m;
    }
  }
}

TEST(AdaptiveEchoSimulationTest, RepeatsSpreadOverThePool) {
  // R = 3, m = 8: items reach 3 emissions each, none more.
  SimRun run = SimulateAdaptive(3, 8, 3000, 16);
  std::map<uint64_t, int> counts;
  for (const auto& [index, k] : run.seen) ++counts[index];
  counts.erase(counts.rbegin()->first);  // the last item may be cut short
  for (const auto& [index, n] : counts) EXPECT_EQ(n, 3) << index;
}

SimRun SimulateAuto(int64_t r, double max_factor, int64_t steps, int64_t warmup) {
  return Simulate(r, steps, [&](StagePtr<Example> in, std::function<int64_t()> clock) {
    return AutoEchoStage<Example>::Make(std::move(in), {.adaptive = {.max_factor = max_factor,
                                                                     .seed = 5,
                                                                     .rate_window = 8,
                                                                     .clock = std::move(clock)},
                                                        .warmup = warmup});
  });
}

TEST(AutoEchoTest, PicksTheMeasuredRatioClampedToTheMaximum) {
  EXPECT_DOUBLE_EQ(SimulateAuto(3, 8, 400, 100).stats.Extra("chosen_factor"), 3.0);
  EXPECT_DOUBLE_EQ(SimulateAuto(6, 4, 400, 100).stats.Extra("chosen_factor"), 4.0);
  EXPECT_DOUBLE_EQ(SimulateAuto(1, 4, 400, 100).stats.Extra("chosen_factor"), 1.0);
  // Not switched yet: still warming up.
  EXPECT_EQ(SimulateAuto(3, 8, 50, 100).stats.Extra("chosen_factor"), 0.0);
}

TEST(AutoEchoTest, AfterWarmupEchoesLikeAFixedFactor) {
  constexpr int64_t kWarmup = 100;
  SimRun run = SimulateAuto(3, 8, 1000, kWarmup);
  ASSERT_DOUBLE_EQ(run.stats.Extra("chosen_factor"), 3.0);
  // After the switch: each fresh item, then its two repeats back to back.
  size_t first = kWarmup;
  while (run.seen[first].second != 0) ++first;
  for (size_t i = first; i + 3 <= run.seen.size(); i += 3) {
    EXPECT_EQ(run.seen[i].second, 0u) << i;
    EXPECT_EQ(run.seen[i + 1], std::make_pair(run.seen[i].first, 1u)) << i;
    EXPECT_EQ(run.seen[i + 2], std::make_pair(run.seen[i].first, 2u)) << i;
  }
  for (size_t i = first + 3; i + 3 <= run.seen.size(); i += 3) {
    EXPECT_EQ(run.seen[i].first, run.seen[i - 3].first + 1) << i;
  }
  EXPECT_NEAR(run.Speedup(3), 3.0, 0.03);  // the switch drops a partly repeated item
}

TEST(AutoEchoTest, FractionalChoiceDrawsCopiesPerItem) {
  // R = 5 clamped to 2.5: 2 or 3 emissions per item after the warm-up.
  SimRun run = SimulateAuto(5, 2.5, 4000, 40);
  ASSERT_DOUBLE_EQ(run.stats.Extra("chosen_factor"), 2.5);
  std::map<uint64_t, int> counts;
  for (size_t i = 200; i < run.seen.size(); ++i) ++counts[run.seen[i].first];
  counts.erase(counts.begin()->first);
  counts.erase(counts.rbegin()->first);
  int twos = 0, threes = 0;
  for (const auto& [index, n] : counts) {
    ASSERT_TRUE(n == 2 || n == 3) << index << ": " << n;
    (n == 2 ? twos : threes)++;
  }
  EXPECT_GT(twos, 200);
  EXPECT_GT(threes, 200);
}

TEST(AutoEchoTest, WorksThroughTheBuilderAndRejectsBadOptions) {
  auto p = FromVector(MakeExamples(500))
               .Prefetch({.depth = 8})
               .AutoEcho({.adaptive = {.max_factor = 3}, .warmup = 10});
  ASSERT_TRUE(p.status().ok());
  absl::StatusOr<std::map<uint64_t, int>> counts = testing::CountBySourceIndex(p);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->size(), 500u);
  for (const auto& [index, n] : *counts) EXPECT_LE(n, 3) << index;
  EXPECT_EQ(FromVector(MakeExamples(3)).AutoEcho({.warmup = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(MakeExamples(3)).AutoEcho({.adaptive = {.max_factor = 0.5}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dataecho
