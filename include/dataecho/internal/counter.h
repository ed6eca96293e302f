// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/counter.h: the statistics counters and the clock stages use. Internal:
// stages report their figures through StageStats (stats.h).
#ifndef DATAECHO_INTERNAL_COUNTER_H_
#define DATAECHO_INTERNAL_COUNTER_H_

#include <atomic>
#include <cstdint>

#include "absl/base/attributes.h"
#include "dataecho/export.h"

namespace dataecho::internal {

// A counter with one writer and any number of readers: no locked instruction
// on the hot path (the writer does a relaxed load + store). Always inlined:
// the library's large units reach GCC's limit on inlining growth, past which
// even a one-line member stays a call (docs/benchmarks.md, "Elements built
// where they go").
class Counter {
 public:
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Add(int64_t n) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Set(int64_t n) { v_.store(n, std::memory_order_relaxed); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE int64_t Get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

// A counter any number of threads may add to.
class SharedCounter {
 public:
  void Add(int64_t n) { v_.fetch_add(n, std::memory_order_relaxed); }
  int64_t Get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

// Monotonic clock in nanoseconds (cheap: vDSO clock_gettime).
DATAECHO_EXPORT int64_t NowNanos();

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_COUNTER_H_
