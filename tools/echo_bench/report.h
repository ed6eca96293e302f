// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's output: the rows printed as the runs finish, the table of the
// points, the JSON document and the SVG plot.
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_REPORT_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_REPORT_H_

#include <string>
#include <vector>

#include "config.h"
#include "run.h"
#include "session.h"

namespace dataecho::bench {

// The header of the per-run rows, and the row of run number `index` (1-based)
// of `total`; `speedup` is against the baseline of the run's repeat (0: that
// baseline has not run yet, shown as "-").
std::string FormatRunHeader();
std::string FormatRunRow(const RunResult& run, int index, int total, double speedup);

// The points (SummarizePoints): medians over the repeats, the spread of
// steps/s, the range of efficiency, a "!" on a point out of regime; then one
// "warning: " line per warning, or the line saying the regime check passed.
std::string FormatTable(const BenchConfig& config, const BenchResult& result);

// {"upstream_ratio", "measured_upstream_ratio", "step_ms", ..., "warnings": [...],
// "runs": [...]}: see docs/echo_bench.md for every field.
std::string ToJson(const BenchConfig& config, const BenchResult& result);

// Speedup vs echo factor: the points with their range over the repeats, the
// ideal min(e, R) dashed, and the points out of regime marked.
std::string ToSvg(const BenchConfig& config, const BenchResult& result);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_REPORT_H_
