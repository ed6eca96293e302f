// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's output: the table, the JSON document and the SVG plot.
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_REPORT_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_REPORT_H_

#include <string>
#include <vector>

#include "config.h"
#include "run.h"

namespace dataecho::bench {

std::string FormatTable(const std::vector<RunResult>& runs);
// {"upstream_ratio", "measured_upstream_ratio", "step_ms", ..., "runs": [...]}.
std::string ToJson(const BenchConfig& config, double measured_ratio,
                   const std::vector<RunResult>& runs);
// Speedup vs echo factor: measured points and the ideal min(e, R), dashed.
std::string ToSvg(const BenchConfig& config, const std::vector<RunResult>& runs);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_REPORT_H_
