// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The consumer's figures are sampled (internal/consumer_meter.h): these check
// that the samples stand for every pull, not for one place in a repeating
// pattern, and that cheap pulls are sampled more sparsely.

#include "dataecho/internal/consumer_meter.h"

#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stats.h"
#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

double Figure(const ConsumerMeter& meter, const char* name) {
  StageStats top;
  meter.AppendTo(&top);
  return top.Extra(name);
}

// Every 16th pull is slow, like the fresh pull of an Echo of factor 16 whose
// input is slow: a meter timing every 16th pull would see either only slow
// pulls (16x the truth) or none (0). Timed pulls drawn at random see them in
// proportion.
TEST(ConsumerMeterTest, APatternOfSlowPullsIsSeenInProportion) {
  ConsumerMeter meter(16);
  constexpr int kPulls = 16 * 400;
  // The truth: the time inside every pull but the first, measured around each
  // (a pull the machine preempted counts in both).
  int64_t inside = 0, slow = 0;
  for (int i = 0; i < kPulls; ++i) {
    const int64_t t0 = NowNanos();
    meter.Before();
    if (i % 16 == 1) absl::SleepFor(absl::Microseconds(200));  // never the first pull
    meter.After();
    const int64_t t1 = NowNanos();
    if (i > 0) inside += t1 - t0;
    if (i % 16 == 1) slow += t1 - t0;
  }
  EXPECT_EQ(Figure(meter, "consumer_pulls"), kPulls);
  const double seen = Figure(meter, "consumer_in_next_s") * 1e9;
  // ~25 slow pulls timed, each standing for 16: near the truth. A meter
  // locked to the pattern sees the slow pulls 16 times over or not at all.
  EXPECT_GT(seen, static_cast<double>(inside) / 3) << "slow pulls: " << slow << " ns";
  EXPECT_LT(seen, static_cast<double>(inside) * 3) << "slow pulls: " << slow << " ns";
}

TEST(ConsumerMeterTest, CheapPullsAreTimedLessOften) {
  ConsumerMeter meter(16);
  for (int i = 0; i < 200'000; ++i) {
    meter.Before();
    meter.After();
  }
  EXPECT_GT(meter.period(), 16);
  EXPECT_LE(meter.period(), ConsumerMeter::kMaxPeriod);
  EXPECT_EQ(Figure(meter, "consumer_pulls"), 200'000);
}

TEST(ConsumerMeterTest, PeriodOneTimesEveryPull) {
  ConsumerMeter meter(1);
  for (int i = 0; i < 50; ++i) {
    meter.Before();
    absl::SleepFor(absl::Microseconds(100));
    meter.After();
  }
  EXPECT_EQ(meter.period(), 1);
  // 49 pulls after the first, each at least 100 us (a sleep is no shorter).
  EXPECT_GE(Figure(meter, "consumer_in_next_s"), 49 * 100e-6);
  EXPECT_GE(Figure(meter, "consumer_first_s"), 100e-6);
}

}  // namespace
}  // namespace dataecho::internal
