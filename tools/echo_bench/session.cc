// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "session.h"

#include <algorithm>

#include "regime.h"
#include "report.h"

namespace dataecho::bench {
namespace {

// A progress bar on stderr for the run of factor `e`.
std::function<void(int64_t)> ProgressBar(const BenchConfig& config, double e, bool on) {
  if (!on) return nullptr;
  const int64_t steps = config.steps;
  return [steps, e](int64_t step) {
    if (step % 10 != 0 && step != steps) return;
    const int width = 30, filled = static_cast<int>(width * step / steps);
    std::fprintf(stderr, "\r  e=%-5g [%s%s] %lld/%lld steps", e,
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), ' ').c_str(),
                 static_cast<long long>(step), static_cast<long long>(steps));
    if (step == steps) std::fputs("\r\033[K", stderr);
  };
}

}  // namespace

absl::StatusOr<BenchResult> RunBench(const BenchConfig& config, const Source& source,
                                     std::FILE* out, bool progress_bar) {
  BenchResult result;
  const std::vector<double> factors = Factors(config);
  const int total = config.repeats * static_cast<int>(factors.size());
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    absl::StatusOr<double> measured = MeasureUpstreamRatio(config, source);
    if (!measured.ok()) return measured.status();
    result.upstream_ratios.push_back(*measured);
    std::fprintf(out,
                 "upstream alone: %.2f steps of %.3g ms per batch of %lld (target R = %g), "
                 "repeat %d/%d\n",
                 *measured, config.step_ms, static_cast<long long>(config.batch_size),
                 config.upstream_ratio > 0 ? config.upstream_ratio : config.target_ratio,
                 repeat + 1, config.repeats);
    if (repeat == 0) std::fputs(FormatRunHeader().c_str(), out);
    std::fflush(out);
    double baseline = 0;  // this repeat's, once it has run
    for (double e : RepeatOrder(factors, repeat)) {
      absl::StatusOr<RunResult> r =
          RunOnce(config, source, e, ProgressBar(config, e, progress_bar));
      if (!r.ok()) return r.status();
      r->repeat = repeat;
      // Unthrottled (--upstream_ratio=0): the ideal is min(e, R) with R as measured.
      if (config.upstream_ratio == 0) r->ideal_speedup = std::max(1.0, std::min(e, *measured));
      if (e == 1.0) baseline = r->steps_per_sec;
      result.runs.push_back(*std::move(r));
      const RunResult& run = result.runs.back();
      if (config.stats)
        std::fprintf(out, "e=%g, repeat %d:\n%s\n", e, repeat + 1, run.stage_stats.c_str());
      std::fputs(FormatRunRow(run, static_cast<int>(result.runs.size()), total,
                              baseline > 0 ? run.steps_per_sec / baseline : 0)
                     .c_str(),
                 out);
      std::fflush(out);
    }
  }
  result.points = SummarizePoints(result.runs, factors);
  result.warnings = CheckRegime(config, result.points);
  return result;
}

}  // namespace dataecho::bench
