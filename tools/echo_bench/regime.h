// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's repeats and regime check: the order of the runs, the medians
// and spreads over the repeats, and the warnings that say when the figures
// cannot be trusted (a busy machine, or a source slower than R assumes).
// Pure functions over given measurements: no clock, no I/O, so the tests
// feed them constructed numbers.
//
//   std::vector<RunResult> runs = ...;  // every repeat of every factor
//   std::vector<RunResult> points = SummarizePoints(runs, Factors(config));
//   std::vector<std::string> warnings = CheckRegime(config, points);
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_REGIME_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_REGIME_H_

#include <string>
#include <vector>

#include "config.h"
#include "run.h"

namespace dataecho::bench {

// Median and range of repeated measurements (all 0 for none). An even count
// takes the mean of the two middle values.
struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
  // (max - min) / median: 0 for a single sample (or a zero median).
  double Relative() const { return median > 0 ? (max - min) / median : 0; }
};
Spread Summarize(std::vector<double> samples);

// The factors a bench runs: 1 (the baseline) first, then the --echo values
// other than 1, then (adaptive, auto) --max_echo if not among them.
std::vector<double> Factors(const BenchConfig& config);

// The factors in the order repeat `repeat` (0-based) runs them: `factors`
// rotated left by `repeat`, so that across repeats every factor, the
// baseline included, runs early and late, between the others.
std::vector<double> RepeatOrder(const std::vector<double>& factors, int repeat);

// One point per factor of `factors` (in that order) from `runs` (every
// repeat of every factor, in any order; RunResult::repeat pairs a run with
// its repeat's baseline, the run with echo 1). A point's steps_per_sec is the
// median over its repeats; speedup is that median over the baseline's
// median; efficiency = speedup / ideal_speedup; efficiency_min/_max range
// over the repeats, each run against the baseline of its own repeat. The
// counts (fresh, repeats, bytes, idle, R̂, stage stats) are those of the
// point's median run (the lower middle one for an even count).
// REQUIRES: factors[0] == 1 and every factor has at least one run.
std::vector<RunResult> SummarizePoints(const std::vector<RunResult>& runs,
                                       const std::vector<double>& factors);

// The baseline's nominal rate, 1 / (max(R, 1) x step), in steps per second;
// 0 (unknown) when the upstream is unthrottled (R = 0).
double NominalStepsPerSec(double upstream_ratio, double step_ms);

// The regime check over the points of SummarizePoints(): a warning when the
// baseline's median is more than config.baseline_tolerance (relative) away
// from NominalStepsPerSec() (skipped when R = 0), one for each point whose
// efficiency is above config.max_efficiency, and one for each point whose
// steps/s spread over the repeats ((max - min) / median) is above
// config.max_spread, and one for each point whose (median run's)
// trainer_lost_fraction is above config.max_trainer_lost. Sets out_of_regime on each point a
// warning names (the baseline for the first), clears it on the others. Empty: the regime holds.
std::vector<std::string> CheckRegime(const BenchConfig& config, std::vector<RunResult>& points);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_REGIME_H_
