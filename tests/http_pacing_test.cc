// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// StartPacer, the schedule that spaces a reader's request starts (internal,
// src/http_client.h), on explicit times.
#include "storage/http_client.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

absl::Time Ms(double ms) { return absl::UnixEpoch() + absl::Microseconds(ms * 1000); }

TEST(StartPacerTest, FirstStartIsImmediateAndOnTimeStartsKeepTheInterval) {
  StartPacer pacer;
  EXPECT_EQ(pacer.next(), absl::InfinitePast());
  const absl::Duration interval = absl::Milliseconds(2);
  pacer.Started(Ms(100), interval);
  EXPECT_EQ(pacer.next(), Ms(102));
  pacer.Started(Ms(102), interval);
  EXPECT_EQ(pacer.next(), Ms(104));
}

TEST(StartPacerTest, AStartUpToHalfAnIntervalLateIsMadeUpByTheNext) {
  StartPacer pacer;
  const absl::Duration interval = absl::Milliseconds(2);
  pacer.Started(Ms(100), interval);
  pacer.Started(Ms(102.7), interval);  // due at 102, woke 0.7 ms late
  EXPECT_EQ(pacer.next(), Ms(104));
  pacer.Started(Ms(105), interval);  // due at 104, half an interval late
  EXPECT_EQ(pacer.next(), Ms(106));
  pacer.Started(Ms(107.1), interval);  // due at 106, later than that
  EXPECT_EQ(pacer.next(), Ms(109.1));
}

TEST(StartPacerTest, ALongGapIsNotFollowedByABurst) {
  StartPacer pacer;
  const absl::Duration interval = absl::Milliseconds(2);
  pacer.Started(Ms(100), interval);
  pacer.Started(Ms(150), interval);  // idle for 48 ms: a new schedule
  EXPECT_EQ(pacer.next(), Ms(152));
  pacer.Started(Ms(152), interval);
  EXPECT_EQ(pacer.next(), Ms(154));
}

TEST(StartPacerTest, TheIntervalMayChangeBetweenStarts) {
  StartPacer pacer;
  pacer.Started(Ms(100), absl::Milliseconds(20));  // the first estimate
  pacer.Started(Ms(120), absl::Milliseconds(2));   // a shorter round trip seen
  EXPECT_EQ(pacer.next(), Ms(122));
}

}  // namespace
}  // namespace dataecho::internal
