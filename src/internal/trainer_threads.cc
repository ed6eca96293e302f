// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The trainer's threads of the echo planners (echo_planner.h,
// RegisterTrainerThread; internal/auto_placement.h, TrainerThreadsCpuNanos).
#include <pthread.h>
#include <time.h>

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/echo_planner.h"
#include "internal/auto_placement.h"

namespace dataecho {
namespace {

struct TrainerThread {
  pthread_t thread;
  clockid_t clock;
  int64_t last_ns = 0;  // its CPU at the last reading
};

// At most this many threads are kept (the newest): a program that starts a
// thread per epoch and iterates in each does not grow the list forever.
constexpr size_t kMaxTrainerThreads = 64;

struct TrainerThreads {
  absl::Mutex mu;
  std::vector<TrainerThread> threads ABSL_GUARDED_BY(mu);
  // The CPU of the threads that ended (or were dropped) at their last reading.
  int64_t gone_ns ABSL_GUARDED_BY(mu) = 0;
};

TrainerThreads& Registry() {
  static auto* registry = new TrainerThreads;  // never destroyed: threads may outlive main
  return *registry;
}

bool ReadClock(clockid_t clock, int64_t* ns) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return false;
  *ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  return true;
}

}  // namespace

void RegisterTrainerThread() {
  const pthread_t self = pthread_self();
  clockid_t clock;
  if (pthread_getcpuclockid(self, &clock) != 0) return;
  TrainerThreads& r = Registry();
  absl::MutexLock lock(&r.mu);
  for (TrainerThread& t : r.threads) {
    if (pthread_equal(t.thread, self)) {
      t.clock = clock;
      return;
    }
  }
  if (r.threads.size() == kMaxTrainerThreads) {
    r.gone_ns += r.threads.front().last_ns;
    r.threads.erase(r.threads.begin());
  }
  int64_t now = 0;
  ReadClock(clock, &now);
  r.threads.push_back({self, clock, now});
}

namespace internal {

int64_t TrainerThreadsCpuNanos() {
  const pthread_t self = pthread_self();
  TrainerThreads& r = Registry();
  absl::MutexLock lock(&r.mu);
  int64_t sum = r.gone_ns;
  for (auto it = r.threads.begin(); it != r.threads.end();) {
    int64_t ns = 0;
    if (!ReadClock(it->clock, &ns)) {  // the thread ended: keep what it used
      r.gone_ns += it->last_ns;
      sum += it->last_ns;
      it = r.threads.erase(it);
      continue;
    }
    it->last_ns = ns;
    if (!pthread_equal(it->thread, self)) sum += ns;  // the caller counts itself
    ++it;
  }
  return sum;
}

}  // namespace internal
}  // namespace dataecho
