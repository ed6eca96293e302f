// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The pipeline's threads and their CPU (stage_kit.h, StartPipelineThread;
// internal/auto_placement.h, PipelineThreadsCpuNanos).
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/stage_kit.h"
#include "dataecho/trace.h"
#include "internal/auto_placement.h"

namespace dataecho {
namespace {

struct PipelineThread {
  pthread_t thread;
  clockid_t clock;
};

// Never destroyed: a thread may end after main() returned.
struct Registry {
  absl::Mutex mu;
  std::vector<PipelineThread> running ABSL_GUARDED_BY(mu);
  int64_t ended_ns ABSL_GUARDED_BY(mu) = 0;  // the CPU of the threads that ended
};
std::atomic<Registry*> registry{nullptr};
// A forked child (a DataLoader's worker) has none of its parent's threads but
// the forking one, and the lock may have been held by one of the others: it
// starts with a registry of its own (the parent's is left, not destroyed).
void ForgetParentThreads() { registry.store(new Registry, std::memory_order_release); }
Registry& Threads() {
  static const bool once = [] {
    registry.store(new Registry, std::memory_order_release);
    pthread_atfork(nullptr, nullptr, ForgetParentThreads);
    return true;
  }();
  (void)once;
  return *registry.load(std::memory_order_acquire);
}

// Lives as long as its thread: at the thread's end it moves the thread's CPU
// from the running threads to ended_ns (read by the thread itself, exact).
struct Marked {
  bool on = false;
  ~Marked() {
    if (!on) return;
    const pthread_t self = pthread_self();
    const int64_t cpu = internal::ThreadCpuNanos();
    Registry& r = Threads();
    absl::MutexLock lock(&r.mu);
    r.ended_ns += cpu;
    std::erase_if(r.running,
                  [&](const PipelineThread& t) { return pthread_equal(t.thread, self); });
  }
};
thread_local Marked marked;

}  // namespace

void StartPipelineThread(const char* name) {
  SetTraceThreadName(name);
  if (marked.on) return;
  clockid_t clock;
  if (pthread_getcpuclockid(pthread_self(), &clock) != 0) return;
  marked.on = true;
  Registry& r = Threads();
  absl::MutexLock lock(&r.mu);
  r.running.push_back({pthread_self(), clock});
}

namespace internal {

int64_t CpuClockNanos(clockid_t clock) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
int64_t ThreadCpuNanos() { return CpuClockNanos(CLOCK_THREAD_CPUTIME_ID); }

int64_t PipelineThreadsCpuNanos() {
  const pthread_t self = pthread_self();
  Registry& r = Threads();
  absl::MutexLock lock(&r.mu);  // a running thread leaves the list under it, before it ends
  int64_t sum = r.ended_ns;
  for (const PipelineThread& t : r.running) {
    if (!pthread_equal(t.thread, self)) sum += CpuClockNanos(t.clock);
  }
  return sum;
}

}  // namespace internal
}  // namespace dataecho
