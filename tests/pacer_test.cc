// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal::Schedule (include/dataecho/internal/pacer.h), the catch-up rule
// that ThrottleStage, the throttled store's link and the HTTP client's
// StartPacer share, on explicit times.
#include "dataecho/internal/pacer.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace dataecho::internal
