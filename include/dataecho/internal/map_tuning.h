// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/map_tuning.h: how a parallel Map sizes its hand-offs, and how a Map
// with parallelism = kAutotune chooses its workers. Internal: MapStage
// (map.h) is built on it.
//
//   int batch = internal::MapBatchSize(cost_ns);            // elements per hand-off
//   int64_t window = internal::MapWindow(parallelism, buffer, batch);
//
//   internal::MapAutotuner tuner;                         // parallelism = kAutotune
//   tuner.Enter();  ...fn...  if (tuner.Leave(busy_ns)) parallelism = tuner.choice();
//
// Thread safety: the functions are thread-safe; a MapAutotuner is used by one
// thread (the consumer's).
#ifndef DATAECHO_INTERNAL_MAP_TUNING_H_
#define DATAECHO_INTERNAL_MAP_TUNING_H_

#include <algorithm>
#include <cstdint>

#include "dataecho/export.h"

namespace dataecho::internal {

// A worker pulls inputs, and publishes results, in batches of about this much
// work (pulling plus fn), at most kMapMaxBatch elements: a hand-off costs a
// lock and a cache-line transfer or two, which a batch pays once, and often a
// wake-up of the consumer (several microseconds on a virtual machine). The
// speedup of cheap elements rises with the batch's work up to about this
// (docs/benchmarks.md, "The figures behind the code's constants").
inline constexpr int64_t kMapBatchNanos = 200'000;
inline constexpr int kMapMaxBatch = 64;

// Elements per batch for elements that cost `cost_ns` each (0: not measured yet).
inline int MapBatchSize(int64_t cost_ns) {
  if (cost_ns <= 0) return 1;
  return static_cast<int>(std::clamp<int64_t>(kMapBatchNanos / cost_ns, 1, kMapMaxBatch));
}

// Elements a parallel Map may have taken from its input and not yet returned.
// `buffer` >= 0: parallelism + buffer. `buffer` < 0 (kAutotune): three
// batches per worker, so that a worker fills one while one is ready and the
// consumer takes a third (it takes up to half the window at a wake-up,
// internal/run_ahead.h): 3 x parallelism for expensive functions, up to 192 x
// parallelism for cheap ones.
inline int64_t MapWindow(int parallelism, int buffer, int batch) {
  if (buffer >= 0) return int64_t{parallelism} + buffer;
  return int64_t{parallelism} * 3 * std::max(batch, 1);
}

// A Map with parallelism = kAutotune runs inline while it measures, then
// keeps the parallelism this returns. Below this much fn time per element a
// hand-off to another thread costs more than it can save.
inline constexpr int64_t kAutotuneMinBusyNanos = 1'500;
// The consumer's cost of taking one result from a worker (lock, cache misses).
inline constexpr int64_t kMapHandoffNanos = 300;
// From this much fn time per element on (a hundred hand-offs: JPEG decoding,
// image augmentation) a kAutotune Map takes a worker per core. Its measuring
// period is the pipeline's start, whose figures are not the steady state's:
// other threads fill their read-ahead, the consumer's first copies fault their
// pages in, and both look like cores taken and a slow consumer. For such a fn
// the two errors do not cost alike: a worker too few leaves a core idle for
// good, a worker too many waits for a core (a context switch per hand-off, a
// fraction of a percent of the call) or for room in the window.
inline constexpr int64_t kAutotuneAllCoresNanos = 100 * kMapHandoffNanos;

// What the autotuner measured while fn ran inline.
struct MapWarmup {
  int64_t elements = 0;
  int64_t busy_ns = 0;         // in fn
  int64_t outside_ns = 0;      // consumer time between calls (downstream stages, the trainer)
  int64_t wall_ns = 0;         // the measuring period
  int64_t thread_cpu_ns = 0;   // CPU time of the consumer's thread in it
  int64_t process_cpu_ns = 0;  // CPU time of the whole process in it
  int cores = 1;               // CPUs this process may run on
};

// 0 (inline) when fn is too cheap (kAutotuneMinBusyNanos); one worker per
// core when it costs far more than a hand-off (kAutotuneAllCoresNanos);
// in between, 0 when no core is left, otherwise the workers that keep up with
// the consumer (busy / (outside + hand-off)), at most the cores left: the CPUs
// minus what the process's other threads used, minus the consumer's own use
// beyond fn.
DATAECHO_EXPORT int ChooseMapParallelism(const MapWarmup& w);

// Measures inline calls of fn for the choice above.
class DATAECHO_EXPORT MapAutotuner {
 public:
  // Elements and time measured before choosing (both).
  static constexpr int64_t kMinElements = 16;
  static constexpr int64_t kMinWallNanos = 5'000'000;

  // At the start of an inline call.
  void Enter();
  // At its end, with the time fn took; true once it has measured enough:
  // choice() is then the parallelism to use from the next call on.
  bool Leave(int64_t busy_ns);
  int choice() const { return choice_; }

 private:
  bool started_ = false;
  int64_t last_leave_ = 0;
  MapWarmup w_;
  int64_t start_wall_ = 0, start_thread_cpu_ = 0, start_process_cpu_ = 0;
  int choice_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MAP_TUNING_H_
