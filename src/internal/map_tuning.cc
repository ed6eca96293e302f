// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/internal/map_tuning.h"

#include <sched.h>
#include <time.h>

#include <cmath>
#include <thread>

#include "dataecho/internal/counter.h"

namespace dataecho::internal {
namespace {

int64_t CpuNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

int ChooseMapParallelism(const MapWarmup& w) {
  if (w.elements <= 0 || w.wall_ns <= 0) return 0;
  const double n = static_cast<double>(w.elements);
  const double busy = static_cast<double>(w.busy_ns) / n;
  if (busy < static_cast<double>(kAutotuneMinBusyNanos)) return 0;
  if (busy >= static_cast<double>(kAutotuneAllCoresNanos)) return std::clamp(w.cores, 1, 1024);
  const double wall = static_cast<double>(w.wall_ns);
  // Cores used by the other threads of the process, and by the consumer's
  // thread for everything but fn (which moves to the workers).
  const double others =
      std::max(0.0, static_cast<double>(w.process_cpu_ns - w.thread_cpu_ns) / wall);
  const double consumer = std::max(0.0, static_cast<double>(w.thread_cpu_ns - w.busy_ns) / wall);
  const double left = static_cast<double>(w.cores) - others - consumer;
  if (left < 0.5) return 0;
  const double outside = static_cast<double>(w.outside_ns) / n;
  const double needed = std::ceil(busy / (outside + static_cast<double>(kMapHandoffNanos)));
  return static_cast<int>(std::clamp(std::min(needed, std::floor(left + 0.5)), 1.0, 1024.0));
}

void MapAutotuner::Enter() {
  const int64_t now = NowNanos();
  if (!started_) {
    started_ = true;
    start_wall_ = now;
    start_thread_cpu_ = CpuNanos(CLOCK_THREAD_CPUTIME_ID);
    start_process_cpu_ = CpuNanos(CLOCK_PROCESS_CPUTIME_ID);
    return;
  }
  w_.outside_ns += now - last_leave_;
}

bool MapAutotuner::Leave(int64_t busy_ns) {
  const int64_t now = NowNanos();
  last_leave_ = now;
  ++w_.elements;
  w_.busy_ns += busy_ns;
  w_.wall_ns = now - start_wall_;
  if (w_.elements < kMinElements || w_.wall_ns < kMinWallNanos) return false;
  w_.thread_cpu_ns = CpuNanos(CLOCK_THREAD_CPUTIME_ID) - start_thread_cpu_;
  w_.process_cpu_ns = CpuNanos(CLOCK_PROCESS_CPUTIME_ID) - start_process_cpu_;
  w_.cores = UsableCores();
  choice_ = ChooseMapParallelism(w_);
  return true;
}

}  // namespace dataecho::internal
