// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench: fresh-vs-echoed training throughput against the ideal min(e, R).
// See `echo_bench --help` and docs/benchmarks.md.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common/output_file.h"
#include "config.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/text.h"
#include "dataecho/trace.h"
#include "fmt/format.h"
#include "report.h"
#include "run.h"
#include "session.h"
#include "testing/cpus.h"

namespace dataecho::bench {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "echo_bench: %s\n", TerminalSafe(s.ToString()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : 1;
}

int Main(int argc, char** argv) {
  absl::StatusOr<BenchConfig> config = ParseArgs(argc, argv);
  if (!config.ok() && config.status().code() == absl::StatusCode::kCancelled) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (!config.ok()) {
    Fail(config.status());
    return 2;  // every problem with the flags is a usage error
  }
  // The output files are created now: an unwritable path fails before the run.
  absl::StatusOr<tools::OutputFile> json = tools::OutputFile::Open("json", config->json);
  if (!json.ok()) return Fail(json.status());
  absl::StatusOr<tools::OutputFile> plot = tools::OutputFile::Open("plot", config->plot);
  if (!plot.ok()) return Fail(plot.status());
  const bool bar = config->progress && isatty(STDERR_FILENO);

  // Before any thread starts: they all inherit it.
  if (absl::Status s = testing::RunOnCpus(config->cpus); !s.ok()) {
    return Fail(absl::Status(s.code(),
                             fmt::format("--cpus={}: {}", config->cpus, std::string(s.message()))));
  }
  config->cpus = testing::UsableCpus();
  const bool pinned = config->pin_trainer && ReserveTrainerCpu();
  absl::StatusOr<Source> source = OpenSource(*config);
  if (!source.ok()) return Fail(source.status());
  std::printf("source: %zu object(s), first %s\n", source->uris.size(),
              TerminalSafe(RedactUri(source->uris[0])).c_str());
  std::printf("cpus: %d\n", config->cpus);
  std::printf("trainer: %s\n", pinned ? "busy-wait step on a CPU of its own, pipeline on the others"
                                      : "busy-wait step, not pinned");

  if (config->target_ratio > 0) {  // unthrottled: a step that makes the upstream R times slower
    absl::StatusOr<double> measured = MeasureUpstreamRatio(*config, *source);
    if (!measured.ok()) return Fail(measured.status());
    config->step_ms *= *measured / config->target_ratio;
  }
  if (!config->trace.empty()) {
    if (absl::Status s = StartTrace(config->trace); !s.ok()) return Fail(s);
  }
  absl::StatusOr<BenchResult> result = RunBench(*config, *source, stdout, bar);
  if (!config->trace.empty()) {
    if (absl::Status s = StopTrace(); !s.ok()) return Fail(s);
  }
  if (!result.ok()) return Fail(result.status());
  std::fputs(FormatTable(*config, *result).c_str(), stdout);
  if (!config->json.empty()) {
    if (absl::Status s = json->Write(ToJson(*config, *result)); !s.ok()) return Fail(s);
  }
  if (!config->plot.empty()) {
    if (absl::Status s = plot->Write(ToSvg(*config, *result)); !s.ok()) return Fail(s);
  }
  if (config->strict && !result->warnings.empty()) {
    std::fprintf(stderr, "echo_bench: --strict: %zu regime warning(s), exit status %d\n",
                 result->warnings.size(), kExitOutOfRegime);
    return kExitOutOfRegime;
  }
  return 0;
}

}  // namespace
}  // namespace dataecho::bench

int main(int argc, char** argv) { return dataecho::bench::Main(argc, argv); }
