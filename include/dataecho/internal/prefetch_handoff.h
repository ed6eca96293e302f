// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/prefetch_handoff.h: when a Prefetch's producer and consumer
// (prefetch.h) meet: how much the consumer takes per lock, how much the
// producer pulls before it pushes, when a full queue has room again, when a
// waiting consumer is woken, and how long a side watches its peer before it
// sleeps; and the timings it goes by. Not part of the public API.
//
//   internal::PrefetchHandoff h(/*depth=*/64);
//   size_t run = h.TakeRun();  // 16 elements per take
//   h.NoteTake(NowNanos());
//   if (h.RoomForProducer(PrefetchHandoff::ProducerWait::kTopUp, queued)) ...
//
// Thread safety: not thread-safe (the stage's lock guards it).
#ifndef DATAECHO_INTERNAL_PREFETCH_HANDOFF_H_
#define DATAECHO_INTERNAL_PREFETCH_HANDOFF_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "dataecho/internal/counter.h"

namespace dataecho::internal {

class PrefetchHandoff {
 public:
  explicit PrefetchHandoff(int depth) : depth_(static_cast<size_t>(depth)) {}

  // A producer that finds the queue full sleeps, alternately, until the
  // consumer has taken TopUp() elements (so that a slow consumer finds it
  // nearly full, for the stalls it is there for) and until it is down to
  // LowWater(). Either way it then refills it in one go: a wake-up per run of
  // elements instead of one per element.
  size_t LowWater() const { return depth_ / 2; }
  size_t TopUp() const { return std::max<size_t>(1, depth_ / 8); }
  // What a producer waiting on room_cv_ waits for.
  enum class ProducerWait { kNo, kTopUp, kLowWater };
  // `queued`: the elements that count against depth.
  bool RoomForProducer(ProducerWait wait, size_t queued) const {
    if (wait == ProducerWait::kTopUp) return queued + TopUp() <= depth_;
    return queued <= LowWater();
  }

  // A fast producer (pulls under kFastPullNanos each) wakes a waiting
  // consumer once WakeBatch() elements are queued, or the consumer has waited
  // kGraceNanos, rather than at the first element: the consumer then takes a
  // run of elements per wake-up instead of one. A slow producer wakes it at
  // once. (No timed waits: they cost a timer and extra context switches.)
  static constexpr int64_t kFastPullNanos = 2'000;
  static constexpr int64_t kGraceNanos = 50'000;
  static constexpr int64_t kSpinNanos = 20'000;
  // Polls `unchanged()` until it is false or kSpinNanos have passed (the
  // clock read every 64 polls).
  template <typename F>
  static void SpinWhile(F unchanged) {
    const int64_t end = NowNanos() + kSpinNanos;
    for (int i = 1; unchanged(); ++i) {
      if (i % 64 == 0 && NowNanos() >= end) return;
    }
  }
  size_t WakeBatch() const { return std::min<size_t>(32, LowWater() + 1); }

  // The consumer takes up to TakeRun() queued elements per lock.
  // (A quarter of the queue: fewer locks per element without holding the
  // queue, docs/benchmarks.md; depth 2, a trainer's queue of batches, takes
  // one at a time.)
  size_t TakeRun() const { return std::max<size_t>(1, depth_ / 4); }

  // Elements the producer pulls before it pushes them in one go (one lock,
  // one clock read each): while the consumer sleeps until WakeBatch() is
  // queued, up to that many; while the queue holds plenty, kRun; else one.
  // Never more than there is room for, and a run ends at a slow pull or after
  // kRunNanos, so that nothing is held back while the consumer could use it.
  static constexpr size_t kRun = 8;
  static constexpr int64_t kRunNanos = 20'000;
  // `queued`: the elements that count against depth.
  size_t PullAhead(size_t queued, bool consumer_waiting, bool consumer_urgent) const {
    size_t n = 1;
    if (consumer_waiting && !consumer_urgent && WakeBatch() > queued) {
      n = WakeBatch() - queued;
    } else if (queued >= 2 * kRun || pull_ns_ < kFastPullNanos / 4) {
      n = kRun;
    }
    return std::min(n, depth_ - queued);
  }

  // The timings: a take at `now` (the interval between takes, averaged), a
  // run of `n` pulls that took `ns` (the producer's pulls, averaged).
  void NoteTake(int64_t now) {
    if (last_take_ns_ != 0) take_interval_ns_ = (3 * take_interval_ns_ + (now - last_take_ns_)) / 4;
    last_take_ns_ = now;
  }
  void NotePulls(int64_t ns, size_t n) {
    pull_ns_ = (3 * pull_ns_ + ns / static_cast<int64_t>(n)) / 4;
  }
  // The producer pulls under kFastPullNanos; the consumer takes every kSpinNanos.
  bool ProducerFast() const { return pull_ns_ < kFastPullNanos; }
  bool ConsumerFast() const { return take_interval_ns_ < kSpinNanos; }
  // What a producer that finds the queue full waits for: kTopUp and
  // kLowWater alternately (after ResetWait(), kTopUp first).
  ProducerWait NextWait() {
    last_wait_ =
        last_wait_ == ProducerWait::kTopUp ? ProducerWait::kLowWater : ProducerWait::kTopUp;
    return last_wait_;
  }
  void ResetWait() { last_wait_ = ProducerWait::kLowWater; }

 private:
  const size_t depth_;
  ProducerWait last_wait_ = ProducerWait::kLowWater;
  int64_t pull_ns_ = 0;  // the producer's pulls, averaged
  int64_t last_take_ns_ = 0;
  int64_t take_interval_ns_ = 0;  // between takes, averaged
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_PREFETCH_HANDOFF_H_
