// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/mutex.h: the lock of the hand-offs between a stage's threads (the
// run-ahead core, the pull lock, the input's snapshots): a POSIX mutex with
// Abseil's thread-safety annotations, and a condition variable over it. Not
// part of the public API.
//
//   internal::Mutex mu;
//   internal::CondVar cv;
//   bool ready ABSL_GUARDED_BY(mu) = false;
//   {
//     internal::MutexLock lock(&mu);
//     while (!ready) cv.Wait(&mu);
//   }
//
// Why not `absl::Mutex`: an Abseil built without NDEBUG (Debian's is) runs
// its deadlock detector on every acquisition, which looks the mutex up in
// one process-wide graph under one spin lock: every lock of every thread
// meets every other's on that spin lock's cache line, and an uncontended
// lock and unlock costs several times a plain one (docs/benchmarks.md, "The
// hand-off's lock"). These locks are taken several times per run of
// elements; the library's other locks (files, connections, stats, a batch's
// buffers) are taken far less often and stay `absl::Mutex`. No
// `Await(Condition)`: wait on a CondVar in a loop.
//
// Thread safety: thread-safe.
#ifndef DATAECHO_INTERNAL_MUTEX_H_
#define DATAECHO_INTERNAL_MUTEX_H_

#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace dataecho::internal {

class CondVar;

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  ~Mutex() { pthread_mutex_destroy(&mu_); }

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { pthread_mutex_lock(&mu_); }
  // Lets go, then wakes what SignalOnUnlock() asked for.
  inline void Unlock() ABSL_UNLOCK_FUNCTION();
  // For the annotations only: no check at run time.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

  // cv->Signal() once the holder lets go of this mutex (Unlock(), or a wait
  // on any CondVar, which signals first): a thread woken while the lock is
  // still held would wake only to block on it (a POSIX condition variable
  // does not move its waiter onto the mutex, as absl::CondVar does).
  inline void SignalOnUnlock(CondVar* cv) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);

 private:
  friend class CondVar;
  static constexpr int kMaxDeferred = 4;
  // Signals now what was deferred (before a wait, or when full).
  inline void SignalDeferred() ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);

  // Adaptive: a thread that finds it taken spins a little before it sleeps,
  // as absl::Mutex does (the holder lets go within a few hundred cycles).
  pthread_mutex_t mu_ = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
  // Signals to send at the next Unlock(), under the mutex (duplicates wake one
  // waiter each, as the Signal() calls they stand for would).
  CondVar* deferred_[kMaxDeferred] = {};
  int deferred_count_ = 0;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;
  ~CondVar() { pthread_cond_destroy(&cv_); }

  // Releases *mu, waits for a Signal() (or a spurious wake-up), takes *mu again.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    mu->SignalDeferred();
    pthread_cond_wait(&cv_, &mu->mu_);
  }
  // The same, for at most `timeout` (on the monotonic clock); true if it ran out.
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    mu->SignalDeferred();
    timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    const int64_t ns = absl::ToInt64Nanoseconds(timeout);
    const int64_t total = int64_t{deadline.tv_nsec} + ns % 1'000'000'000;
    deadline.tv_sec += static_cast<time_t>(ns / 1'000'000'000 + total / 1'000'000'000);
    deadline.tv_nsec = static_cast<long>(total % 1'000'000'000);  // NOLINT(google-runtime-int)
    return pthread_cond_clockwait(&cv_, &mu->mu_, CLOCK_MONOTONIC, &deadline) == ETIMEDOUT;
  }
  void Signal() { pthread_cond_signal(&cv_); }
  void SignalAll() { pthread_cond_broadcast(&cv_); }

 private:
  pthread_cond_t cv_ = PTHREAD_COND_INITIALIZER;
};

void Mutex::Unlock() {
  const int n = deferred_count_;
  if (n == 0) {
    pthread_mutex_unlock(&mu_);
    return;
  }
  CondVar* wake[kMaxDeferred];
  for (int i = 0; i < n; ++i) wake[i] = deferred_[i];
  deferred_count_ = 0;
  pthread_mutex_unlock(&mu_);
  for (int i = 0; i < n; ++i) wake[i]->Signal();
}

void Mutex::SignalOnUnlock(CondVar* cv) {
  if (deferred_count_ == kMaxDeferred) SignalDeferred();
  deferred_[deferred_count_++] = cv;
}

void Mutex::SignalDeferred() {
  for (int i = 0; i < deferred_count_; ++i) deferred_[i]->Signal();
  deferred_count_ = 0;
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MUTEX_H_
