// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// throttle.h: make an upstream slow on purpose.
//
// Throttle delays each element of its input by a fixed `latency` and/or the
// time `bytes_per_second` needs for its bytes (ElementTraits<T>::ByteSize).
// It is how benches and tests put a pipeline into the upstream-bound regime:
// put it before a Prefetch and the upstream delivers at most one element per
// (latency + bytes / bytes_per_second).
//
//   auto slow = dataecho::ThrottleStage<Example>::Make(
//       std::move(source), {.latency = absl::Milliseconds(2)});
//
// Pacing follows a schedule (internal/pacer.h): element n is released at
// (scheduled release of n-1) + its cost when it is requested within
// `catch_up` (or one cost, if longer) of that release, else at (request time)
// + its cost. So sleep overshoot and thread wake-up delays do not accumulate
// (the long-run rate is exact), while a consumer that pauses for longer gets
// no burst of saved-up elements afterwards. Waits sleep until shortly before
// the deadline, then spin the rest (`spin` option) for precision, and
// are cancelled promptly.
//
// `min_sleep` trades smoothness for fewer wake-ups: an element due less than
// `min_sleep` from now is released at once (the schedule still advances by
// its cost), so the throttle sleeps about once per `min_sleep` and releases
// the elements of that interval together. The long-run rate is unchanged;
// per-element timer and thread wake-ups, which cost tens of microseconds on
// a virtual machine, are avoided. Real object stores deliver in such bursts
// (a ranged GET brings many records at once).
//
// Stats: input_wait = time blocked on an input that had nothing ready
// (stats.h); extra "throttled_s" = time spent delaying.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_THROTTLE_H_
#define DATAECHO_THROTTLE_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/pacer.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

namespace internal {

// Waits until `deadline_ns` (NowNanos clock) unless `*cancelled` becomes true
// (checked under `mu`; whoever sets it must hold `mu`). Sleeps until `spin_ns`
// before the deadline, then busy-waits. Returns false if cancelled.
inline bool WaitUntil(absl::Mutex& mu, const bool& cancelled, int64_t deadline_ns,
                      int64_t spin_ns) {
  {
    absl::MutexLock lock(&mu);
    const int64_t sleep_ns = deadline_ns - spin_ns - NowNanos();
    if (sleep_ns > 0) {
      mu.AwaitWithTimeout(absl::Condition(&cancelled), absl::Nanoseconds(sleep_ns));
    }
    if (cancelled) return false;
  }
  while (NowNanos() < deadline_ns) {
  }
  return true;
}

}  // namespace internal

template <typename T>
class ThrottleStage final : public PassThroughStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, ThrottleOptions options) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options));
    return StagePtr<T>(new ThrottleStage(std::move(input), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    const int64_t start = internal::NowNanos();
    absl::StatusOr<std::optional<T>> r;
    totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &r));
    const int64_t got = internal::NowNanos();
    if (!r.ok() || !r->has_value()) return r;
    double cost_ns = absl::ToDoubleNanoseconds(options_.latency);
    if (options_.bytes_per_second > 0) {
      cost_ns +=
          1e9 * static_cast<double>(ElementTraits<T>::ByteSize(**r)) / options_.bytes_per_second;
    }
    // Continue the schedule if asked again within one cost of the last
    // release: the gap is then thread wake-up and hand-off latency, which a
    // real upstream would have overlapped with its work. After a longer pause
    // (the consumer did not want more), start afresh.
    const int64_t spin_ns = absl::ToInt64Nanoseconds(options_.spin);
    const int64_t cost = static_cast<int64_t>(cost_ns);
    const int64_t catch_up = std::max(cost, absl::ToInt64Nanoseconds(options_.catch_up));
    const int64_t release_ns = absl::ToUnixNanos(schedule_.Book(
        absl::FromUnixNanos(start), absl::Nanoseconds(cost), absl::Nanoseconds(catch_up)));
    if (absl::Nanoseconds(release_ns - got) >= options_.min_sleep) {
      if (!internal::WaitUntil(mu_, cancel_, release_ns, spin_ns)) return CancelledError();
      throttled_ns_.Add(internal::NowNanos() - got);
    }
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**r)));
    return r;
  }

 protected:
  // A pass-through stage (stage.h): no state of its own (its timing does not
  // change what it emits); references and epochs are its input's.
  std::string StateName() const override { return options_.name; }
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
  }

  StageStats OwnStats() const override {
    return totals_.Report(options_.name,
                          {{"throttled_s", static_cast<double>(throttled_ns_.Get()) * 1e-9}});
  }

 private:
  ThrottleStage(StagePtr<T> input, ThrottleOptions options)
      : PassThroughStage<T>(std::move(input)), options_(std::move(options)) {}

  const ThrottleOptions options_;
  // Releases on the NowNanos clock, as absl::Time since the Unix epoch.
  internal::Schedule schedule_;
  absl::Mutex mu_;
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter throttled_ns_;
};

// Compiled once, in src/throttle.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(ThrottleStage);

}  // namespace dataecho

#endif  // DATAECHO_THROTTLE_H_
