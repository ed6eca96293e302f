// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/pacer.h: a schedule of back-to-back slots, the one pacing rule of
// the library. Internal: ThrottleStage (throttle.h), the throttled store's
// shared link and the HTTP client's request starts are built on it.
//
//   internal::Schedule schedule;
//   // An element that costs 2 ms, asked for at `now`: release it at `due`.
//   absl::Time due = schedule.Book(now, absl::Milliseconds(2), absl::Milliseconds(1));
//
// Each booking takes a slot of `cost`. The slot begins where the previous one
// ended when it is booked no later than `catch_up` after that end (the caller
// was a little late: sleep overshoot, a thread waking up late), so lateness
// does not accumulate and the long-run rate is exact. A later booking begins
// at `now` (the caller paused): no burst of saved-up slots follows a pause.
// A booking before the previous end always begins at that end (slots never
// overlap). With catch_up = 0 the slot simply begins at max(now, previous end).
//
// Thread safety: not thread-safe; the owner serializes Book().
#ifndef DATAECHO_INTERNAL_PACER_H_
#define DATAECHO_INTERNAL_PACER_H_

#include "absl/time/time.h"

namespace dataecho::internal {

class Schedule {
 public:
  // The end of the last slot booked (InfinitePast before the first).
  absl::Time end() const { return end_; }

  // Books the next slot of `cost` for a caller arriving at `now`; returns
  // the slot's end. REQUIRES: cost >= 0, catch_up >= 0.
  absl::Time Book(absl::Time now, absl::Duration cost, absl::Duration catch_up) {
    const absl::Time begin = now - end_ <= catch_up ? end_ : now;
    end_ = begin + cost;
    return end_;
  }

 private:
  absl::Time end_ = absl::InfinitePast();
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_PACER_H_
