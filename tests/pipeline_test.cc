// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Whole-pipeline behaviour: errors in order, determinism, shutdown at any
// moment, and the echoing speedup with a throttled upstream.
#include "dataecho/pipeline.h"

#include <algorithm>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::DrainWithStatus;
using testing::MakeExamples;

// A source whose element k is an error.
Pipeline<Example> FailingAt(int64_t k, int64_t n = 100) {
  return FromGenerator<Example>(
      [k, n, i = int64_t{0}]() mutable -> absl::StatusOr<std::optional<Example>> {
        if (i == n) return std::nullopt;
        if (i == k)
          return absl::DataLossError("corrupted record at mem://source:" + std::to_string(k));
        return testing::MakeExample(static_cast<uint64_t>(i++));
      });
}

TEST(PipelineErrorTest, ErrorAtKAfterElementsBeforeIt) {
  constexpr int64_t k = 37;
  auto check_examples = [&](Pipeline<Example> p, int64_t copies) {
    auto stage = std::move(p).Release();
    ASSERT_TRUE(stage.ok());
    auto [items, status] = DrainWithStatus(**stage);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    ASSERT_EQ(static_cast<int64_t>(items.size()), k * copies);
    std::vector<uint64_t> seen;
    for (const Example& e : items) seen.push_back(e.source_index);
    std::sort(seen.begin(), seen.end());
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i / static_cast<size_t>(copies));
    EXPECT_EQ((*stage)->Next().status().code(), absl::StatusCode::kDataLoss);  // sticky
  };
  check_examples(FailingAt(k).Map([](Example e) { return e; }, {.parallelism = 4}), 1);
  check_examples(FailingAt(k).Prefetch({.depth = 4}), 1);
  check_examples(FailingAt(k).Echo({.factor = 3}), 3);
  check_examples(FailingAt(k).Shuffle({.buffer_size = 10, .seed = 1}), 1);
  check_examples(FailingAt(k)
                     .Map([](Example e) { return e; }, {.parallelism = 2})
                     .Prefetch({.depth = 3})
                     .Echo({.factor = 2})
                     .Shuffle({.buffer_size = 16}),
                 2);
  // Batch: the rows before the error arrive (the last batch partial), then the error.
  auto batches = FailingAt(k).Prefetch({.depth = 2}).Batch({.batch_size = 8}).Release();
  auto [items, status] = DrainWithStatus(**batches);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  int64_t rows = 0;
  for (const Batch& b : items) rows += b.num_rows;
  EXPECT_EQ(rows, k);
  EXPECT_EQ(items.size(), 5u);
}

// A pipeline with parallel, jittered work and every random stage.
std::vector<std::pair<uint64_t, uint32_t>> RunRandomPipeline(uint64_t seed) {
  auto p = FromVector(MakeExamples(3000, 8))
               .Map(
                   [](Example e) {
                     std::this_thread::sleep_for(
                         std::chrono::microseconds((e.source_index * 7919) % 200));
                     return e;
                   },
                   {.parallelism = 4})
               .Prefetch({.depth = 16})
               .Echo({.factor = 1.7, .seed = seed})
               .Shuffle({.buffer_size = 500, .seed = seed + 1});
  std::vector<std::pair<uint64_t, uint32_t>> order;
  while (true) {
    auto r = p.Next();
    EXPECT_TRUE(r.ok());
    if (!r.ok() || !r->has_value()) break;
    order.emplace_back((*r)->source_index, (*r)->repeat_index);
  }
  return order;
}

TEST(PipelineDeterminismTest, SameSeedSameOutputDifferentSeedDifferent) {
  const auto a = RunRandomPipeline(42);
  const auto b = RunRandomPipeline(42);
  const auto c = RunRandomPipeline(43);
  EXPECT_GT(a.size(), 4500u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Builds one of several pipelines that block in different places.
Pipeline<Batch> BlockingPipeline(int kind) {
  switch (kind % 4) {
    case 0:  // producer blocked on a full queue (nobody consumes fast)
      return FromVector(MakeExamples(2000, 64))
          .Prefetch({.depth = 2})
          .Echo({.factor = 2})
          .Batch({.batch_size = 4});
    case 1:  // consumer blocked on an empty queue behind a slow throttle
      return FromVector(MakeExamples(2000, 64))
          .Throttle({.latency = absl::Seconds(5)})
          .Prefetch({.depth = 4})
          .Batch({.batch_size = 4});
    case 2:  // parallel map workers + shuffle fill behind a throttle
      return FromVector(MakeExamples(5000, 64))
          .Throttle({.latency = absl::Microseconds(300)})
          .Map([](Example e) { return e; }, {.parallelism = 3})
          .Prefetch({.depth = 8})
          .Shuffle({.buffer_size = 4000})
          .Batch({.batch_size = 32})
          .Prefetch({.depth = 2});
    default:  // everything, fast
      return FromVector(MakeExamples(3000, 64))
          .Map([](Example e) { return e; }, {.parallelism = 2})
          .Prefetch({.depth = 4})
          .Echo({.factor = 3})
          .Shuffle({.buffer_size = 100})
          .Batch({.batch_size = 16})
          .Echo({.factor = 2})
          .Prefetch({.depth = 2});
  }
}

TEST(PipelineShutdownTest, DestroyAtRandomMomentsReturns) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 200; ++i) {
    Pipeline<Batch> p = BlockingPipeline(i);
    ASSERT_TRUE(p.status().ok());
    const int reads = static_cast<int>(rng() % 4);
    if (i % 4 == 0 || i % 4 == 3) {  // others block for long: destroy them mid-fill
      for (int r = 0; r < reads; ++r) ASSERT_TRUE(p.Next().ok());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    // Destroyed here, with its threads in whatever state they are.
  }
}

TEST(PipelineShutdownTest, CancelWakesABlockedConsumer) {
  std::mt19937 rng(99);
  for (int i = 0; i < 200; ++i) {
    Pipeline<Batch> p = BlockingPipeline(i);
    absl::Status last;
    std::thread consumer([&] {
      while (true) {
        auto r = p.Next();
        if (!r.ok()) {
          last = r.status();
          return;
        }
        if (!r->has_value()) return;
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    p.Cancel();
    consumer.join();  // hangs (and the ctest TIMEOUT fails the test) if Cancel does not wake it
    if (!last.ok()) EXPECT_EQ(last.code(), absl::StatusCode::kCancelled) << last;
  }
}

// A source on a simulated clock: item n becomes ready at tick R * (n + 1), so
// the upstream is R consumer steps slower per item than the consumer.
class ClockedSource final : public Stage<Example> {
 public:
  ClockedSource(const int64_t& tick, int r) : tick_(tick), r_(r) {}
  absl::StatusOr<std::optional<Example>> Next() override {
    return absl::InternalError("the simulation only calls TryNext");
  }
  bool TryNext(absl::StatusOr<std::optional<Example>>* out) override {
    if (tick_ < r_ * (n_ + 1)) return false;
    *out = testing::MakeExample(static_cast<uint64_t>(n_++));
    return true;
  }
  void Cancel() override {}
  void AppendStats(std::vector<StageStats>*) const override {}
  int64_t produced() const { return n_; }

 private:
  const int64_t& tick_;
  const int64_t r_;
  int64_t n_ = 0;
};

// Consumer elements per upstream item-time over `ticks` simulated steps: each
// tick the consumer takes one element if one is ready, else idles.
double SimulatedSpeedup(double e, int r, int64_t ticks) {
  int64_t tick = 0;
  auto source = std::make_unique<ClockedSource>(tick, r);
  ClockedSource* clocked = source.get();
  auto echo = EchoStage<Example>::Make(std::move(source), {.factor = e, .seed = 3});
  EXPECT_TRUE(echo.ok());
  int64_t consumed = 0;
  for (; tick < ticks; ++tick) {
    absl::StatusOr<std::optional<Example>> out;
    if ((*echo)->TryNext(&out)) {
      EXPECT_TRUE(out.ok() && out->has_value());
      ++consumed;
    }
  }
  EXPECT_LE(clocked->produced(), ticks / r);  // upstream work is the same for every e
  return static_cast<double>(consumed) / static_cast<double>(ticks / r);
}

TEST(PipelineEchoTest, ThrottledUpstreamGivesMinOfFactorAndRatioMoreElements) {
  constexpr int kR = 4;
  constexpr int64_t kTicks = 40000;  // 10,000 upstream item-times
  for (double e : {1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0}) {
    const double ideal = std::min<double>(e, kR);
    EXPECT_NEAR(SimulatedSpeedup(e, kR, kTicks), ideal, 0.02 * ideal) << "e=" << e;
  }
}

}  // namespace
}  // namespace dataecho

namespace dataecho {
namespace {

double ThrottledSeconds(const Pipeline<int64_t>& p) {
  for (const StageStats& s : p.Stats()) {
    if (s.name == "throttle") return s.Extra("throttled_s", -1);
  }
  return -1;
}

// min_sleep: elements due less than min_sleep ahead pass without a sleep, and
// the schedule still advances, so the average rate holds (elapsed time is at
// least the schedule minus one min_sleep; a lower bound, safe on a busy machine).
TEST(ThrottleTest, MinSleepReleasesBurstsAndKeepsTheRate) {
  constexpr int kN = 100;
  const absl::Duration latency = absl::Microseconds(200);
  {
    auto p = FromRange(0, kN).Throttle({.latency = latency, .min_sleep = absl::Hours(1)});
    for (int i = 0; i < kN; ++i) ASSERT_TRUE(p.Next().ok());
    EXPECT_EQ(ThrottledSeconds(p), 0.0);  // never slept: every element was due within the hour
  }
  {
    const absl::Duration min_sleep = absl::Milliseconds(2);
    auto p = FromRange(0, kN).Throttle({.latency = latency, .min_sleep = min_sleep});
    const absl::Time start = absl::Now();
    for (int i = 0; i < kN; ++i) ASSERT_TRUE(p.Next().ok());
    EXPECT_GE(absl::Now() - start, latency * kN - min_sleep);
    EXPECT_GT(ThrottledSeconds(p), 0.0);
  }
  EXPECT_FALSE(FromRange(0, 1).Throttle({.min_sleep = absl::Milliseconds(-1)}).status().ok());
}

}  // namespace
}  // namespace dataecho
