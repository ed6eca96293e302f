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

// The points of a --grid bench: per placement, its factors against the
// baseline (before_augment, e = 1), which comes first.
std::vector<RunResult> GridPoints(const std::vector<RunResult>& runs) {
  std::vector<RunResult> baselines;
  for (const RunResult& r : runs) {
    if (r.echo == 1.0 && r.insert == InsertName(Insert::kBeforeAugment)) baselines.push_back(r);
  }
  std::vector<RunResult> points;
  for (Insert insert :
       {Insert::kBeforeAugment, Insert::kAfterAugment, Insert::kBatch, Insert::kAuto}) {
    std::vector<RunResult> mine = baselines;
    std::vector<double> factors = {1.0};
    for (const RunResult& r : runs) {
      if (r.insert != InsertName(insert) || r.echo == 1.0) continue;
      mine.push_back(r);
      if (std::find(factors.begin(), factors.end(), r.echo) == factors.end())
        factors.push_back(r.echo);
    }
    std::vector<RunResult> p = SummarizePoints(mine, factors);
    for (size_t i = 0; i < p.size(); ++i) {
      if (i == 0 && insert != Insert::kBeforeAugment) continue;  // the baseline once
      points.push_back(std::move(p[i]));
    }
  }
  return points;
}

absl::StatusOr<BenchResult> RunGrid(const BenchConfig& config, const Source& source, std::FILE* out,
                                    bool progress_bar) {
  BenchResult result;
  const int per_repeat = static_cast<int>(RotatedGrid(config, 0).size());
  const int total = config.repeats * per_repeat;
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    absl::StatusOr<double> measured = MeasureUpstreamRatio(config, source);
    if (!measured.ok()) return measured.status();
    result.upstream_ratios.push_back(*measured);
    std::fprintf(out,
                 "upstream alone: %.2f steps of %.3g ms per batch of %lld, grid repeat %d/%d\n",
                 *measured, config.step_ms, static_cast<long long>(config.batch_size), repeat + 1,
                 config.repeats);
    if (repeat == 0) std::fputs(FormatRunHeader().c_str(), out);
    std::fflush(out);
    double baseline = 0;
    for (const GridRun& g : RotatedGrid(config, repeat)) {
      BenchConfig c = config;
      c.insert = g.insert;
      absl::StatusOr<RunResult> r =
          RunOnce(c, source, g.echo, ProgressBar(config, g.echo, progress_bar));
      if (!r.ok()) return r.status();
      r->repeat = repeat;
      if (config.upstream_ratio == 0) r->ideal_speedup = std::max(1.0, std::min(g.echo, *measured));
      if (g.echo == 1.0 && g.insert == Insert::kBeforeAugment) baseline = r->steps_per_sec;
      result.runs.push_back(*std::move(r));
      const RunResult& run = result.runs.back();
      if (config.stats)
        std::fprintf(out, "%s e=%g, repeat %d:\n%s\n", run.insert.c_str(), g.echo, repeat + 1,
                     run.stage_stats.c_str());
      std::string row = FormatRunRow(run, static_cast<int>(result.runs.size()), total,
                                     baseline > 0 ? run.steps_per_sec / baseline : 0);
      row.pop_back();
      std::fprintf(out, "%s  %s\n", row.c_str(), run.insert.c_str());
      std::fflush(out);
    }
  }
  result.points = GridPoints(result.runs);
  result.warnings = CheckRegime(config, result.points);
  result.has_grid = true;
  result.grid = SummarizeGrid(result.runs);
  return result;
}

}  // namespace

absl::StatusOr<BenchResult> RunBench(const BenchConfig& config, const Source& source,
                                     std::FILE* out, bool progress_bar) {
  if (config.grid) return RunGrid(config, source, out, progress_bar);
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
