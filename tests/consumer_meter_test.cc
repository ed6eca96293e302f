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
  int64_t slow_nanos = 0;  // the truth, measured around every slow pull
  for (int i = 0; i < kPulls; ++i) {
    meter.Before();
    if (i % 16 == 1) {  // never the first pull (it is counted apart)
      const int64_t t0 = NowNanos();
      absl::SleepFor(absl::Microseconds(200));
      slow_nanos += NowNanos() - t0;
    }
    meter.After();
  }
  EXPECT_EQ(Figure(meter, "consumer_pulls"), kPulls);
  const double seen = Figure(meter, "consumer_in_next_s") * 1e9;
  // ~25 slow pulls timed, each standing for 16: within 2x of the truth (a
  // pattern-locked meter is off by 16x or sees 0).
  EXPECT_GT(seen, 0.5 * static_cast<double>(slow_nanos));
  EXPECT_LT(seen, 2.0 * static_cast<double>(slow_nanos) + 1e6);
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
  // 49 pulls after the first, each at least 100 us.
  EXPECT_GE(Figure(meter, "consumer_in_next_s"), 49 * 100e-6);
  EXPECT_GE(Figure(meter, "consumer_first_s"), 100e-6);
}

}  // namespace
}  // namespace dataecho::internal
