// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/run_ahead.h: where threads that run ahead of a consumer meet it
// (Prefetch's producer, a parallel Map's workers, the Python hand-off): the
// lock, the counts, when each side waits and is woken, cancel,
// stop-for-Restart and pause-for-save. Type-independent and compiled once
// (src/internal/run_ahead.cc); the elements live in the typed queue above it
// (internal/run_ahead_queue.h, or MapWorkers' slots), under mu(). Not part of
// the public API.
//
//   internal::RunAhead core(/*depth=*/64);
//   // producer:
//   internal::MutexLock lock(&core.mu());
//   int64_t n = core.Reserve(core.RunLength(), 1);  // 0: stopped
//   ... pull n without the lock, push them ...
//   core.Made(n, made);
//   core.Pushed(ready_now, made, make_ns);
//   // consumer:
//   internal::MutexLock lock(&core.mu());
//   if (core.AwaitReady(kNoDeadline)) ... take k, core.Took(k) ...
//
// THE POLICY, one for every run-ahead stage (docs/benchmarks.md has the
// figures behind its constants):
// - Counts. `depth` bounds the elements reserved by producers (pulling),
//   made and waiting, and held by the consumer (taken in a run, not yet
//   returned). A producer reserves before it pulls; a reservation not made
//   (the end, a short run) is given back.
// - A producer that finds no room waits until there is room for `need`
//   (a queue of 16 or more alternates depth / 8 and depth / 2, RefillNeed():
//   a slow consumer finds it nearly full, a fast one wakes the producer once
//   per run; a shorter one is kept full); a Map worker until there is room
//   for its batch.
// - A consumer that keeps finding nothing ready (kStarvedTakes takes in a
//   row: it is the faster side) is woken when WakeBatch() elements are
//   ready (kWakeBatch; half the window while the producers have every
//   core, where each wake takes a core from one of them), or at the first element after it has held
//   out for 1.5 x pace x WakeBatch() (pace: the producers' time per element, averaged); at once
//   when that is over kMaxHold, or when it found nothing ready only this once
//   (a slower consumer that caught up loses no time).
//   The end, an error, a cancel, a stop always wake it.
// - Before sleeping, a side whose peer is fast watches for it (the consumer
//   for a push while the pace is under kMaxSpin, for up to 1.5 paces, unless
//   the producers are as many as the cores; the
//   only producer for a take while the consumer takes more often than kSpinNanos):
//   a sleep and a wake-up cost more than that. It yields its core between
//   looks after the first kPureSpinNanos, so that on a loaded machine the
//   peer it waits for can run.
//
// Thread safety: thread-safe; the methods marked REQUIRES(mu()) under mu().
#ifndef DATAECHO_INTERNAL_RUN_AHEAD_H_
#define DATAECHO_INTERNAL_RUN_AHEAD_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "dataecho/export.h"
#include "dataecho/internal/mutex.h"

namespace dataecho::internal {

class RunAhead {
 public:
  static constexpr int64_t kNoDeadline = INT64_MAX;
  // The consumer watches for a push while the producers make an element in
  // under kMaxSpin; a producer for a take while the consumer takes every
  // kSpinNanos.
  static constexpr int64_t kMaxSpin = 100'000;
  static constexpr int64_t kSpinNanos = 20'000;
  // Looks without yielding the core, then with.
  static constexpr int64_t kPureSpinNanos = 2'000;
  // The longest a consumer holds out for more than one element.
  static constexpr int64_t kMaxHold = 1'000'000;
  // ... and only after this many takes in a row found nothing ready.
  static constexpr int kStarvedTakes = 2;
  // What a held-out consumer waits for (WakeBatch()): at most this many,
  // or half the window while the producers have every core.
  static constexpr int64_t kWakeBatch = 32;
  // A producer's run of pulls ends after kRunNanos, or at a pull slower
  // than kSlowPullNanos: nothing is held back while the consumer could use it.
  static constexpr int64_t kRunNanos = 20'000;
  static constexpr int64_t kSlowPullNanos = 2'000;
  static constexpr int64_t kRun = 8;
  // Queues shorter than this are refilled an element at a time.
  static constexpr int64_t kRefillRunsFrom = 16;

  DATAECHO_EXPORT explicit RunAhead(int64_t depth);
  RunAhead(const RunAhead&) = delete;
  RunAhead& operator=(const RunAhead&) = delete;

  internal::Mutex& mu() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

  // ---- lifecycle ----
  // Sticky: every wait returns, Reserve() returns 0 from here on.
  DATAECHO_EXPORT void Cancel() ABSL_LOCKS_EXCLUDED(mu_);
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  bool CancelledLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancel_; }
  // Restart(): producers stop at their next Reserve(); the caller joins them,
  // then EndStop() forgets the counts (the typed layer drops its elements).
  DATAECHO_EXPORT void BeginStop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  DATAECHO_EXPORT void EndStop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A producer should stop: a cancel or a stop.
  bool StoppedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancel_ || stopping_; }
  // SaveState(): producers finish the pulls in flight and start none until
  // Resume(). Pause() returns when none is in flight (or on a cancel).
  DATAECHO_EXPORT void Pause() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  DATAECHO_EXPORT void Resume() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- producers ----
  // Waits until there is room for `need` (>= 1) elements (or a stop, or a
  // pause ends), then reserves up to `want` of the room and returns how
  // many; 0 when the producers stop.
  DATAECHO_EXPORT int64_t Reserve(int64_t want, int64_t need) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What a single producer that found the queue full waits for (see the
  // file comment): depth / 8 and depth / 2 of room, alternately; one
  // below kRefillRunsFrom.
  DATAECHO_EXPORT int64_t RefillNeed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Elements a single producer pulls before pushing them in one go: while
  // the consumer holds out for WakeBatch(), what it lacks; with plenty
  // queued or fast pulls, kRun; else one.
  DATAECHO_EXPORT int64_t RunLength() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A producer's reservation is settled: it made `made` of the `reserved`
  // elements (the rest, at the end or in a short run, are given back).
  DATAECHO_EXPORT void Made(int64_t reserved, int64_t made) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `n` elements made in `make_ns` (pulling and, for a Map, fn; per
  // producer thread, divided by their count) were pushed, and `ready` are now
  // ready for the consumer: wakes it as the policy says.
  DATAECHO_EXPORT void Pushed(int64_t ready, int64_t n, int64_t make_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The end of the stream or an error is ready after the elements: wakes
  // the consumer. (A stop forgets it.)
  DATAECHO_EXPORT void Ended() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The producers stop for good and the consumer is woken (a Map's fn
  // failed: the error is what it takes from here on).
  DATAECHO_EXPORT void Halt() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Producer threads (1 unless set: a Map's workers). Only a single
  // producer watches for the consumer's takes before it sleeps: several
  // watching beside the consumer would take the cores they wait for.
  DATAECHO_EXPORT void SetProducers(int producers) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The bound changes (a Map's window grows with its workers).
  DATAECHO_EXPORT void SetDepth(int64_t depth) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t depth() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return depth_; }

  // ---- the consumer ----
  // Whether the consumer may take: an element, the end, a cancel.
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || ready_ > 0 || ended_;
  }
  // Waits until ReadyLocked() or `deadline` (NowNanos(); kNoDeadline: none)
  // as the policy says; returns ReadyLocked().
  DATAECHO_EXPORT bool AwaitReady(int64_t deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The consumer took `n` ready elements; they count against depth until
  // Released().
  DATAECHO_EXPORT void Took(int64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The consumer is done with `n` it took: room for producers.
  DATAECHO_EXPORT void Released(int64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Elements a consumer takes per lock: a quarter of the queue (fewer locks
  // per element without holding the queue; depth 2, a trainer's batches,
  // takes one at a time), or, right after a wait that held out for
  // WakeBatch(), that batch.
  DATAECHO_EXPORT int64_t TakeRun() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- figures ----
  // Reserved, ready and held: what counts against depth.
  int64_t Outstanding() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return outstanding_; }
  int64_t consumer_wait_ns() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return consumer_wait_ns_; }
  int64_t producer_blocked_ns() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return producer_blocked_ns_;
  }

 private:
  enum class Refill { kTopUp, kHalf };
  int64_t RoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return depth_ - outstanding_; }
  // A producer that needs room for `need` must wait.
  bool MustWaitLocked(int64_t need) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t WakeBatch() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t HoldNanos() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WakeConsumerLocked(bool always) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SignalRoomLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Looks at `counter` until it changes or `limit_ns` passed, without the lock.
  void Watch(const std::atomic<uint64_t>& counter, int64_t limit_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable internal::Mutex mu_;
  internal::CondVar consumer_cv_;  // signalled while consumer_waiting_
  internal::CondVar room_cv_;      // signalled while producers_waiting_ > 0
  internal::CondVar idle_cv_;      // Pause(): no pull in flight
  std::atomic<bool> cancelled_{false};
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  int64_t depth_ ABSL_GUARDED_BY(mu_);
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;  // reserved + ready + held
  int64_t ready_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // reservations not yet Made()
  // The consumer's wait.
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  int64_t consumer_wait_start_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t hold_ns_ ABSL_GUARDED_BY(mu_) = 0;    // of this wait: 0 wakes at the first element
  bool waited_ ABSL_GUARDED_BY(mu_) = false;    // the take to come followed a wait
  bool held_out_ ABSL_GUARDED_BY(mu_) = false;  // ... that held out for WakeBatch()
  int starved_takes_ ABSL_GUARDED_BY(mu_) = 0;  // takes in a row that followed a wait
  // The producers' waits.
  int producers_ ABSL_GUARDED_BY(mu_) = 1;
  int producers_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t room_need_ ABSL_GUARDED_BY(mu_) = 1;  // what the last one to wait needs
  Refill refill_ ABSL_GUARDED_BY(mu_) = Refill::kHalf;
  // Timings, averaged.
  int64_t pace_ns_ ABSL_GUARDED_BY(mu_) = 0;  // the producers' time per element
  int64_t last_take_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t take_interval_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t consumer_wait_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t producer_blocked_ns_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped at every push, the end, a cancel: what a watching consumer looks
  // at; and at every take, a cancel, a stop, a resume: what a watching producer does.
  std::atomic<uint64_t> pushes_{0};
  std::atomic<uint64_t> takes_{0};
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_RUN_AHEAD_H_
