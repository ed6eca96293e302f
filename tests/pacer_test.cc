// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal::Schedule (include/dataecho/internal/pacer.h), the catch-up rule
// that ThrottleStage, the throttled store's link and the HTTP client's
// StartPacer share, and StartPacer itself (internal, src/storage/http_client.h),
// on explicit times.
#include "dataecho/internal/pacer.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/http_client.h"

namespace dataecho::internal {
namespace {

absl::Time Ms(double ms) { return absl::UnixEpoch() + absl::Microseconds(ms * 1000); }

TEST(ScheduleTest, TheFirstSlotBeginsNow) {
  Schedule schedule;
  EXPECT_EQ(schedule.end(), absl::InfinitePast());
  EXPECT_EQ(schedule.Book(Ms(100), absl::Milliseconds(2), absl::Milliseconds(1)), Ms(102));
  EXPECT_EQ(schedule.end(), Ms(102));
}

TEST(ScheduleTest, EarlyBookingsQueueBackToBack) {
  Schedule schedule;
  schedule.Book(Ms(100), absl::Milliseconds(2), absl::ZeroDuration());
  EXPECT_EQ(schedule.Book(Ms(100), absl::Milliseconds(2), absl::ZeroDuration()), Ms(104));
  EXPECT_EQ(schedule.Book(Ms(101), absl::Milliseconds(3), absl::ZeroDuration()), Ms(107));
}

TEST(ScheduleTest, ALateBookingWithinCatchUpKeepsTheSchedule) {
  Schedule schedule;
  schedule.Book(Ms(100), absl::Milliseconds(2), absl::Milliseconds(1));
  // Due at 102, booked 1 ms late: the slot still begins at 102.
  EXPECT_EQ(schedule.Book(Ms(103), absl::Milliseconds(2), absl::Milliseconds(1)), Ms(104));
}

TEST(ScheduleTest, ALaterBookingBeginsAfresh) {
  Schedule schedule;
  schedule.Book(Ms(100), absl::Milliseconds(2), absl::Milliseconds(1));
  EXPECT_EQ(schedule.Book(Ms(103.5), absl::Milliseconds(2), absl::Milliseconds(1)), Ms(105.5));
  // Zero catch-up (a link): any idle time is lost.
  EXPECT_EQ(schedule.Book(Ms(105.6), absl::Milliseconds(1), absl::ZeroDuration()), Ms(106.6));
}

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
