// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/pull_timed.h: take the next element of an input and account the
// time it blocked. Internal: what the synchronous stages (Filter, Cache, Zip,
// Interleave, PaddedBatch) count as input_wait.
//
//   absl::StatusOr<std::optional<T>> r;
//   totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &r));
//
// Thread safety: as the input's Next().
#ifndef DATAECHO_INTERNAL_PULL_TIMED_H_
#define DATAECHO_INTERNAL_PULL_TIMED_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

// Pulls the next element of `input` into `*out`; if the input had none ready
// (TryNext()), blocks in Next(). Returns the nanoseconds it blocked: time
// blocked on an input with nothing ready, never the time a synchronous input
// spends computing in the caller's thread (that is the input's own time), and
// no clock read when nothing blocks (a clock read costs more than handing on
// an in-memory element).
template <typename T>
int64_t PullTimed(Stage<T>& input, absl::StatusOr<std::optional<T>>* out) {
  if (input.TryNext(out)) return 0;
  const int64_t t0 = NowNanos();
  *out = input.Next();
  return NowNanos() - t0;
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_PULL_TIMED_H_
