// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The cost measurement of the echo planner (internal/auto_placement.h): one
// window's costs (EchoCosts) from two cumulative readings of the pipeline's
// clocks and counters, and their smoothing over windows. The planner stage
// (auto_placement.cc) takes the readings and plans on the costs.
//
//   WindowReading cur = TakeWindowReading(now, control, fresh_rows, batches, rows, above);
//   if (!WindowHasEnoughSamples(cur, last)) return;  // the window goes on
//   WindowCosts m = MeasureWindowCosts(last, cur, control, cores, step, batch_rows, bytes);
//   SmoothWindowCosts(m, &costs);
//
// Thread safety: plain functions; `control`'s members are atomics.
#ifndef DATAECHO_SRC_INTERNAL_WINDOW_COSTS_H_
#define DATAECHO_SRC_INTERNAL_WINDOW_COSTS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dataecho/echo_planner.h"
#include "dataecho/stats.h"
#include "internal/auto_placement.h"

namespace dataecho::internal {

// One window's cumulative readings (see the planner's Decide).
struct WindowReading {
  int64_t wall_ns = 0, pipeline_cpu = 0, downstream_cpu = 0;
  int64_t fresh = 0, rows_built = 0, augment_calls = 0, augment_sampled = 0, augment_cpu = 0;
  int64_t batches = 0;
  double boundary_blocked_s = 0;
};

// A reading at `now` on the consumer's thread: the clocks, `control`'s
// counters, the consumer's `fresh_rows` and `batches`, and from the stats
// `rows` of the planner's input the boundary Prefetch's blocked time and fresh
// items (the row below the one named `above_boundary`, if there is one).
WindowReading TakeWindowReading(int64_t now, const EchoControl& control, int64_t fresh_rows,
                                int64_t batches, std::span<const StageStats> rows,
                                const std::string& above_boundary);

// A window to plan on has at least kMinWindowFresh fresh items and, when
// items are augmented, kMinAugmentSamples timed augmentations.
inline constexpr int64_t kMinWindowFresh = 16, kMinAugmentSamples = 4;
bool WindowHasEnoughSamples(const WindowReading& cur, const WindowReading& last);

// The consumer's step in a window: the median of its times between pulls
// (nanoseconds in, seconds out; 0 for none). Not their mean: a step the
// trainer spent on something else (an evaluation, a checkpoint, a moment
// without its CPU) is not its pace. Reorders `*steps`.
double MedianStepSeconds(std::vector<int64_t>* steps);

// One window's costs and what the planner needs besides them.
struct WindowCosts {
  EchoCosts costs;
  double cpu_per_fresh = 0;     // the pipeline's CPU seconds per fresh item
  bool upstream_bound = false;  // the boundary Prefetch hardly blocked
  double consumed = 0;          // the upstream's own time per fresh item at the consumer's pace
};

// The costs of the window from `last` to `cur`. REQUIRES: the window has a
// positive wall time and fresh items (WindowHasEnoughSamples).
WindowCosts MeasureWindowCosts(const WindowReading& last, const WindowReading& cur,
                               const EchoControl& control, int cores, double step,
                               int64_t batch_rows, int64_t batch_bytes);

// Folds a later window's costs `m` into `costs` (one window is noisy).
void SmoothWindowCosts(const WindowCosts& m, EchoCosts* costs);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_WINDOW_COSTS_H_
