// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench --grid: every fixed placement (before_augment, after_augment,
// batch) at every --echo factor, and auto (--max_echo its largest factor), in
// one bench: each repeat runs the baseline and all of them once, in an order
// that rotates from repeat to repeat. The result: auto's median steps/s over
// the best fixed point's ("auto_vs_best_fixed"). Pure functions over given
// runs, like regime.h.
//
//   for (const GridRun& g : RotatedGrid(config, repeat)) ... RunOnce(...)
//   GridSummary summary = SummarizeGrid(result.runs);
//   std::cout << FormatGrid(summary);
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_GRID_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_GRID_H_

#include <string>
#include <vector>

#include "config.h"
#include "run.h"

namespace dataecho::bench {

struct GridRun {
  Insert insert;
  double echo;  // auto: its largest factor
};

// The baseline (before_augment, e = 1), every fixed placement x every --echo
// factor other than 1, then auto at --max_echo; rotated left by `repeat`.
std::vector<GridRun> RotatedGrid(const BenchConfig& config, int repeat);

struct GridPoint {
  std::string insert;
  double echo = 0;
  std::vector<double> samples;  // steps/s, one per repeat
  double median = 0;
};

struct GridSummary {
  std::vector<GridPoint> points;  // in the order of their first run
  GridPoint best_fixed;           // the fixed placement with the highest median
  GridPoint auto_point;
  double auto_vs_best_fixed = 0;  // auto_point.median / best_fixed.median
};

// The points of `runs` (RunResult::insert and echo name a point).
GridSummary SummarizeGrid(const std::vector<RunResult>& runs);

// "grid: auto 35.2 steps/s / best fixed 36.0 (batch, e = 4) = 0.98" and a
// line per point.
std::string FormatGrid(const GridSummary& summary);

// "\"auto_vs_best_fixed\": ..., \"best_fixed\": {\"insert\": ..., \"echo\": ...},
// \"grid\": [...]" (fields of the top-level JSON object, no braces).
std::string GridJsonFields(const GridSummary& summary);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_GRID_H_
