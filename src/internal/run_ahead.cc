// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.

#include "dataecho/internal/run_ahead.h"

#include <algorithm>
#include <thread>

#include "absl/time/time.h"
#include "dataecho/internal/counter.h"

namespace dataecho::internal {
namespace {

// The cores this process may run on (at least 1).
int Cores() {
  static const int cores = std::max(1U, std::thread::hardware_concurrency());
  return cores;
}

}  // namespace

RunAhead::RunAhead(int64_t depth) : depth_(std::max<int64_t>(1, depth)) {}

void RunAhead::Cancel() {
  internal::MutexLock lock(&mu_);
  cancel_ = true;
  cancelled_.store(true, std::memory_order_release);
  pushes_.fetch_add(1, std::memory_order_release);
  takes_.fetch_add(1, std::memory_order_release);
  consumer_cv_.SignalAll();
  room_cv_.SignalAll();
  idle_cv_.SignalAll();
}

void RunAhead::BeginStop() {
  stopping_ = true;
  takes_.fetch_add(1, std::memory_order_release);
  room_cv_.SignalAll();
}

void RunAhead::EndStop() {
  stopping_ = false;
  ended_ = false;
  outstanding_ = ready_ = in_flight_ = 0;
  refill_ = Refill::kHalf;
}

void RunAhead::Halt() {
  stopping_ = true;
  ended_ = true;
  pushes_.fetch_add(1, std::memory_order_release);
  takes_.fetch_add(1, std::memory_order_release);
  consumer_cv_.SignalAll();
  room_cv_.SignalAll();
}

void RunAhead::Pause() {
  paused_ = true;
  while (in_flight_ > 0 && !cancel_) idle_cv_.Wait(&mu_);
}

void RunAhead::Resume() {
  paused_ = false;
  takes_.fetch_add(1, std::memory_order_release);
  room_cv_.SignalAll();
}

void RunAhead::Watch(const std::atomic<uint64_t>& counter, int64_t limit_ns) {
  const uint64_t seen = counter.load(std::memory_order_relaxed);
  mu_.Unlock();
  const int64_t t0 = NowNanos();
  for (int i = 1; counter.load(std::memory_order_acquire) == seen; ++i) {
    if (i % 64 != 0) continue;
    const int64_t waited = NowNanos() - t0;
    if (waited >= limit_ns) break;
    // On a loaded machine the peer may be waiting for this core; a yield is
    // a system call, so only every few microseconds.
    if (waited >= kPureSpinNanos && i % 1024 == 0) std::this_thread::yield();
  }
  mu_.Lock();
}

bool RunAhead::MustWaitLocked(int64_t need) const {
  // The window may shrink while a producer waits (a Map's batches): never
  // more than all of it.
  return !StoppedLocked() && (paused_ || RoomLocked() < std::min(need, depth_));
}

int64_t RunAhead::Reserve(int64_t want, int64_t need) {
  need = std::max<int64_t>(need, 1);
  if (MustWaitLocked(need)) {
    const int64_t t0 = NowNanos();
    // A consumer that takes often makes room within microseconds.
    if (!paused_ && producers_ == 1 && take_interval_ns_ > 0 && take_interval_ns_ < kSpinNanos) {
      Watch(takes_, kSpinNanos);
    }
    ++producers_waiting_;
    while (MustWaitLocked(need)) {
      room_need_ = need;
      room_cv_.Wait(&mu_);
    }
    --producers_waiting_;
    producer_blocked_ns_ += NowNanos() - t0;
  }
  if (StoppedLocked()) return 0;
  const int64_t n = std::clamp<int64_t>(want, 1, RoomLocked());
  outstanding_ += n;
  ++in_flight_;
  SignalRoomLocked();  // another producer may fit in what is left
  return n;
}

int64_t RunAhead::RefillNeed() {
  // A short queue (a trainer's batches, the Python hand-off's slots) is
  // kept full: a wake-up per element is what its elements cost anyway.
  if (depth_ < kRefillRunsFrom) return 1;
  refill_ = refill_ == Refill::kTopUp ? Refill::kHalf : Refill::kTopUp;
  return refill_ == Refill::kTopUp ? depth_ / 8 : depth_ - depth_ / 2;
}

int64_t RunAhead::WakeBatch() const {
  // Producers that have every core: each wake of the consumer takes a core
  // from one of them (a context switch each way), so it holds out for half
  // the window; else kWakeBatch is plenty against the cost of a wake.
  const int64_t cap = producers_ >= Cores() ? depth_ : kWakeBatch;
  return std::min<int64_t>(cap, depth_ / 2 + 1);
}

int64_t RunAhead::HoldNanos() const {
  const int64_t batch = WakeBatch();
  if (batch <= 1 || pace_ns_ <= 0) return 0;
  const int64_t hold = pace_ns_ * batch * 3 / 2;
  return hold > kMaxHold ? 0 : hold;
}

int64_t RunAhead::RunLength() const {
  int64_t n = 1;
  const int64_t batch = WakeBatch();
  if (consumer_waiting_ && hold_ns_ > 0 && batch > ready_) {
    n = batch - ready_;
  } else if (outstanding_ >= 2 * kRun || pace_ns_ < kSlowPullNanos / 4) {
    n = kRun;
  }
  return std::clamp<int64_t>(n, 1, std::max<int64_t>(1, RoomLocked()));
}

void RunAhead::Made(int64_t reserved, int64_t made) {
  --in_flight_;
  outstanding_ -= reserved - made;
  if (paused_ && in_flight_ == 0) idle_cv_.SignalAll();
  if (reserved > made) SignalRoomLocked();
}

void RunAhead::Pushed(int64_t ready, int64_t n, int64_t make_ns) {
  ready_ = ready;
  if (n > 0 && make_ns > 0) {
    const int64_t per = make_ns / n;
    pace_ns_ = pace_ns_ == 0 ? per : (3 * pace_ns_ + per) / 4;
  }
  pushes_.fetch_add(1, std::memory_order_release);
  WakeConsumerLocked(/*always=*/false);
}

void RunAhead::Ended() {
  ended_ = true;
  pushes_.fetch_add(1, std::memory_order_release);
  WakeConsumerLocked(/*always=*/true);
}

void RunAhead::SetDepth(int64_t depth) {
  depth_ = std::max<int64_t>(1, depth);
  SignalRoomLocked();
}

void RunAhead::WakeConsumerLocked(bool always) {
  if (!consumer_waiting_) return;
  if (!always && ready_ == 0) return;
  // Held out for WakeBatch(): wake it when they are there, or its hold is over.
  if (always || hold_ns_ == 0 || ready_ >= WakeBatch() ||
      NowNanos() - consumer_wait_start_ >= hold_ns_) {
    mu_.SignalOnUnlock(&consumer_cv_);
  }
}

void RunAhead::SignalRoomLocked() {
  if (producers_waiting_ > 0 && !paused_ && RoomLocked() >= std::min(room_need_, depth_)) {
    mu_.SignalOnUnlock(&room_cv_);
  }
}

bool RunAhead::AwaitReady(int64_t deadline) {
  if (ReadyLocked()) return true;
  const int64_t t0 = NowNanos();
  if (deadline <= t0) return false;
  // Producers that make an element within kMaxSpin: watch for it first,
  // unless they have every core (a watch would take one from them).
  if (pace_ns_ > 0 && pace_ns_ <= kMaxSpin && producers_ < Cores()) {
    const int64_t limit =
        std::min({kMaxSpin, std::max(kSpinNanos, pace_ns_ * 3 / 2), deadline - t0});
    Watch(pushes_, limit);
  }
  consumer_waiting_ = true;
  consumer_wait_start_ = t0;
  // Only a consumer that keeps finding nothing ready (the faster side) holds
  // out for more than one: one that caught up for once takes the next at once.
  hold_ns_ = starved_takes_ >= kStarvedTakes ? HoldNanos() : 0;
  waited_ = true;
  held_out_ = hold_ns_ > 0;
  while (!ReadyLocked()) {
    int64_t until = deadline;
    if (hold_ns_ > 0 || deadline != kNoDeadline) {
      const int64_t now = NowNanos();
      if (now >= deadline) break;
      if (hold_ns_ > 0 && now - t0 >= hold_ns_) hold_ns_ = 0;  // the next element wakes it
      if (hold_ns_ > 0) until = std::min(until, t0 + hold_ns_);
      if (until != kNoDeadline) {
        consumer_cv_.WaitWithTimeout(&mu_, absl::Nanoseconds(until - now));
        continue;
      }
    }
    consumer_cv_.Wait(&mu_);
  }
  consumer_waiting_ = false;
  hold_ns_ = 0;
  consumer_wait_ns_ += NowNanos() - t0;
  return ReadyLocked();
}

void RunAhead::SetProducers(int producers) { producers_ = std::max(1, producers); }

void RunAhead::Took(int64_t n) {
  ready_ -= n;
  starved_takes_ = waited_ ? starved_takes_ + 1 : 0;
  waited_ = held_out_ = false;
  if (producers_ != 1) return;  // only a single producer watches for takes
  const int64_t now = NowNanos();
  if (last_take_ns_ != 0) take_interval_ns_ = (3 * take_interval_ns_ + (now - last_take_ns_)) / 4;
  last_take_ns_ = now;
}

void RunAhead::Released(int64_t n) {
  if (n == 0) return;
  outstanding_ -= n;
  takes_.fetch_add(1, std::memory_order_release);
  SignalRoomLocked();
}

int64_t RunAhead::TakeRun() const {
  // A consumer that held out for a wake batch takes it in one lock (the
  // producers are the slower side: the room does not hold them back);
  // otherwise a quarter of the window, so that producers keep room.
  const int64_t run = std::max<int64_t>(1, depth_ / 4);
  return held_out_ ? std::max(run, WakeBatch()) : run;
}

}  // namespace dataecho::internal
