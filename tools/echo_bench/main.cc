// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench: fresh-vs-echoed training throughput against the ideal min(e, R).
// See `echo_bench --help` and docs/benchmarks.md.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "config.h"
#include "fmt/format.h"
#include "report.h"
#include "run.h"

namespace dataecho::bench {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "echo_bench: %s\n", s.ToString().c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return absl::InternalError(fmt::format("cannot write {}", path));
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::StatusOr<BenchConfig> config = ParseArgs(argc, argv);
  if (!config.ok() && config.status().code() == absl::StatusCode::kCancelled) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (!config.ok()) return Fail(config.status());
  const bool bar = config->progress && isatty(STDERR_FILENO);

  const bool pinned = config->pin_trainer && ReserveTrainerCpu();
  absl::StatusOr<Source> source = OpenSource(*config);
  if (!source.ok()) return Fail(source.status());
  std::printf("source: %zu object(s), first %s\n", source->uris.size(), source->uris[0].c_str());
  std::printf("trainer: %s\n", pinned ? "busy-wait step on a CPU of its own, pipeline on the others"
                                      : "busy-wait step, not pinned");

  absl::StatusOr<double> measured = MeasureUpstreamRatio(*config, *source);
  if (!measured.ok()) return Fail(measured.status());
  if (config->target_ratio > 0) {  // unthrottled: a step that makes the upstream R times slower
    config->step_ms *= *measured / config->target_ratio;
    measured = MeasureUpstreamRatio(*config, *source);
    if (!measured.ok()) return Fail(measured.status());
  }
  std::printf("upstream alone: %.2f steps of %.3g ms per batch of %lld (target R = %g)\n",
              *measured, config->step_ms, static_cast<long long>(config->batch_size),
              config->upstream_ratio > 0 ? config->upstream_ratio : config->target_ratio);

  // Adaptive: e = 1 (no echoing), then one run per cap m (--echo values and --max_echo).
  std::vector<double> factors = {1.0};
  for (double e : config->echo) {
    if (e != 1.0) factors.push_back(e);
  }
  if (config->insert == Insert::kAdaptive && config->max_echo != 1.0 &&
      std::find(factors.begin(), factors.end(), config->max_echo) == factors.end()) {
    factors.push_back(config->max_echo);
  }
  std::vector<RunResult> runs;
  for (double e : factors) {
    auto progress = [&](int64_t step) {
      if (!bar || (step % 10 != 0 && step != config->steps)) return;
      const int width = 30, filled = static_cast<int>(width * step / config->steps);
      std::fprintf(stderr, "\r  e=%-5g [%s%s] %lld/%lld steps", e,
                   std::string(static_cast<size_t>(filled), '#').c_str(),
                   std::string(static_cast<size_t>(width - filled), ' ').c_str(),
                   static_cast<long long>(step), static_cast<long long>(config->steps));
      if (step == config->steps) std::fputs("\r\033[K", stderr);
    };
    absl::StatusOr<RunResult> r = RunOnce(*config, *source, e, progress);
    if (!r.ok()) return Fail(r.status());
    // Unthrottled (--upstream_ratio=0): the ideal is min(e, R) with R as measured.
    if (config->upstream_ratio == 0) r->ideal_speedup = std::min(e, *measured);
    const double base = runs.empty() ? r->steps_per_sec : runs[0].steps_per_sec;
    r->speedup = r->steps_per_sec / base;
    r->efficiency = r->speedup / r->ideal_speedup;
    if (config->stats) std::printf("e=%g:\n%s\n", e, r->stage_stats.c_str());
    runs.push_back(*r);
  }
  std::fputs(FormatTable(runs).c_str(), stdout);
  if (!config->json.empty()) {
    if (absl::Status s = WriteFile(config->json, ToJson(*config, *measured, runs)); !s.ok())
      return Fail(s);
  }
  if (!config->plot.empty()) {
    if (absl::Status s = WriteFile(config->plot, ToSvg(*config, runs)); !s.ok()) return Fail(s);
  }
  return 0;
}

}  // namespace
}  // namespace dataecho::bench

int main(int argc, char** argv) { return dataecho::bench::Main(argc, argv); }
