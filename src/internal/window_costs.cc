// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The cost measurement of the echo planner (internal/window_costs.h).
#include "internal/window_costs.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace dataecho::internal {

WindowReading TakeWindowReading(int64_t now, const EchoControl& control, int64_t fresh_rows,
                                int64_t batches, std::span<const StageStats> rows,
                                const std::string& above_boundary) {
  WindowReading r;
  r.wall_ns = now;
  r.pipeline_cpu = PipelineThreadsCpuNanos();  // not the trainer's threads, nor the caller
  r.downstream_cpu = control.downstream_cpu_ns.load(std::memory_order_relaxed);
  r.fresh = fresh_rows;  // unless the boundary's count is found below
  r.rows_built = control.rows_built.load(std::memory_order_relaxed);
  r.augment_calls = control.augment_calls.load(std::memory_order_relaxed);
  r.augment_sampled = control.augment_sampled.load(std::memory_order_relaxed);
  r.augment_cpu = control.augment_sampled_cpu_ns.load(std::memory_order_relaxed);
  r.batches = batches;
  // The boundary: the stage below echo:before_augment, if it is a Prefetch.
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].name == above_boundary) {
      r.boundary_blocked_s = rows[i - 1].Extra("producer_blocked_s");
      // Fresh items as the upstream delivered them, not as the consumer
      // sees them (a shuffle buffer of fresh items from before a switch
      // would read as upstream speed).
      r.fresh = rows[i - 1].elements;
      break;
    }
  }
  return r;
}

bool WindowHasEnoughSamples(const WindowReading& cur, const WindowReading& last) {
  if (cur.fresh - last.fresh < kMinWindowFresh) return false;
  return cur.augment_calls == last.augment_calls ||
         cur.augment_sampled - last.augment_sampled >= kMinAugmentSamples;
}

double MedianStepSeconds(std::vector<int64_t>* steps) {
  if (steps->empty()) return 0;
  auto mid = steps->begin() + static_cast<std::ptrdiff_t>(steps->size() / 2);
  std::nth_element(steps->begin(), mid, steps->end());
  return static_cast<double>(*mid) * 1e-9;
}

WindowCosts MeasureWindowCosts(const WindowReading& last, const WindowReading& cur,
                               const EchoControl& control, int cores, double step,
                               int64_t batch_rows, int64_t batch_bytes) {
  const WindowReading& a = last;
  const double wall = static_cast<double>(cur.wall_ns - a.wall_ns) * 1e-9;
  const double fresh = static_cast<double>(cur.fresh - a.fresh);
  WindowCosts out;
  EchoCosts& m = out.costs;
  const double sampled = static_cast<double>(cur.augment_sampled - a.augment_sampled);
  m.augment_cpu =
      sampled > 0 ? static_cast<double>(cur.augment_cpu - a.augment_cpu) * 1e-9 / sampled : 0;
  const double augment_total =
      m.augment_cpu * static_cast<double>(cur.augment_calls - a.augment_calls);
  const double down = static_cast<double>(cur.downstream_cpu - a.downstream_cpu) * 1e-9;
  const double rows_built = static_cast<double>(cur.rows_built - a.rows_built);
  const double down_rest = control.augment_inline ? down - augment_total : down;
  m.row_cpu = rows_built > 0 ? std::max(0.0, down_rest) / rows_built : 0;
  const double off_thread_augment = control.augment_inline ? 0 : augment_total;
  const double up_cpu =
      static_cast<double>(cur.pipeline_cpu - a.pipeline_cpu) * 1e-9 - down - off_thread_augment;
  m.upstream_cpu = std::max(0.0, up_cpu) / fresh;
  // The upstream's time per item is seen only while it is the bottleneck
  // (its boundary Prefetch hardly blocked on a full queue): then it is the
  // window's time per fresh item. Otherwise the upstream was faster than
  // that, and no more is known: a source paced with catch-up (a throttle)
  // delivers a burst after each block, so its time while unblocked would
  // read far too fast.
  //
  // Of that time, the part the pipeline's cores spent on its CPU work (per
  // fresh item, shared over the cores) is not the upstream's own: on a
  // CPU-bound pipeline the copies' augmentation slows the fresh items, and
  // the model counts that CPU itself. It slows them only as far as the cores
  // were busy: on an I/O-bound one the copies are made while the upstream
  // waits anyway (subtracting all of their CPU read R 10-20 % low there, and
  // the factor followed). What is left is the upstream's latency, at least
  // its own CPU spread over the cores.
  const double cores_d = static_cast<double>(cores);
  const double cpu_total = std::max(0.0, up_cpu) + down + off_thread_augment;
  out.cpu_per_fresh = cpu_total / fresh;
  const double busy = std::min(1.0, cpu_total / (wall * cores_d));
  auto own = [&](double per_item) {
    return std::max(m.upstream_cpu / cores_d, per_item - busy * out.cpu_per_fresh / cores_d);
  };
  const double blocked = std::max(0.0, cur.boundary_blocked_s - a.boundary_blocked_s);
  out.consumed = own(wall / fresh);
  out.upstream_bound = blocked < 0.1 * wall;
  m.upstream_time = out.upstream_bound ? out.consumed : own(std::max(0.0, wall - blocked) / fresh);
  m.step = step;
  m.batch_rows = batch_rows;
  m.cores = cores;
  const int64_t before = control.fresh[kPlacedBefore].load();
  m.item_bytes = before > 0 ? control.fresh_bytes[kPlacedBefore].load() / before : 0;
  const int64_t after = control.fresh[kPlacedAfter].load();
  m.augmented_bytes = after > 0 ? control.fresh_bytes[kPlacedAfter].load() / after : 0;
  m.batch_bytes = batch_bytes;
  return out;
}

void SmoothWindowCosts(const WindowCosts& window, EchoCosts* costs) {
  const EchoCosts& m = window.costs;
  auto mix = [](double& old, double now_value) { old = 0.5 * old + 0.5 * now_value; };
  mix(costs->upstream_cpu, m.upstream_cpu);
  mix(costs->augment_cpu, m.augment_cpu);
  mix(costs->row_cpu, m.row_cpu);
  if (window.upstream_bound) {
    // Slower: at once (too little echo costs speed); faster: slowly (a
    // paced source's burst after a block looks fast for a window).
    const double w = m.upstream_time > costs->upstream_time ? 0.5 : 0.1;
    costs->upstream_time += w * (m.upstream_time - costs->upstream_time);
  } else {
    // Faster than the consumer's pace, perhaps: slowly, as above.
    costs->upstream_time +=
        0.1 * (std::min(costs->upstream_time, window.consumed) - costs->upstream_time);
  }
  mix(costs->step, m.step);
  costs->batch_rows = m.batch_rows;
  costs->cores = m.cores;
  costs->item_bytes = m.item_bytes;
  costs->augmented_bytes = m.augmented_bytes;
  costs->batch_bytes = m.batch_bytes;
}

}  // namespace dataecho::internal
