// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's sequence of runs: `--repeats` rounds, each measuring the
// upstream alone and then running the baseline (e = 1) and every echo factor
// once, in an order that rotates from round to round (RepeatOrder), so that a
// load that comes and goes hits the baseline as often as the echo runs. Each
// run's row is printed as it finishes; the points (medians over the rounds)
// and the regime check (regime.h) follow. With --grid, each round runs every
// placement and factor and auto (grid.h), and the points are per placement.
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_SESSION_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_SESSION_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config.h"
#include "grid.h"
#include "run.h"

namespace dataecho::bench {

struct BenchResult {
  std::vector<double> upstream_ratios;  // "upstream alone" (MeasureUpstreamRatio), one per repeat
  std::vector<RunResult> runs;          // every run, in the order they ran
  std::vector<RunResult> points;        // one per factor (SummarizePoints), baseline first
  std::vector<std::string> warnings;    // CheckRegime(); empty: the regime holds
  // --grid: the points of every placement and factor, auto against the best.
  bool has_grid = false;
  GridSummary grid;
};

// Runs the whole bench on `source`, writing the progress lines and each
// run's row to `out` (flushed after each) and, with `progress_bar`, a bar to
// stderr. Returns the first error of a run (the rows of the runs before it
// are already out).
absl::StatusOr<BenchResult> RunBench(const BenchConfig& config, const Source& source,
                                     std::FILE* out, bool progress_bar);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_SESSION_H_
