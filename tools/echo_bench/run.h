// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's measurement: build the pipeline for one echo factor, emulate a
// trainer on it and report what it saw.
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_RUN_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_RUN_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config.h"
#include "dataecho/stage.h"
#include "dataecho/storage/object_store.h"

namespace dataecho::bench {

// Where the records come from, resolved once for all runs.
struct Source {
  std::shared_ptr<ObjectStore> store;
  std::vector<std::string> uris;  // tfrecord shards, or {images, labels} for idx
  std::string format;
  std::string dataset;               // fashion_mnist | imagenet (BenchConfig::dataset)
  std::shared_ptr<void> keep_alive;  // e.g. the embedded HTTP server
};

// Keeps one CPU for the emulated trainer: from now on the calling thread, and
// every thread it starts (the pipeline's, the HTTP client's and server's),
// runs on the other CPUs; RunOnce's measured steps run on the kept one. The
// busy-wait step holds a whole core, and a pipeline thread woken onto that
// core would preempt the "accelerator" (a real trainer blocks on its device
// and leaves its core free). Returns false (and changes nothing) with fewer
// than two CPUs.
bool ReserveTrainerCpu();

// Resolves --source (or prepares and serves the embedded default) and checks
// that the first object can be read.
absl::StatusOr<Source> OpenSource(const BenchConfig& config);

struct RunResult {
  double echo = 1;
  std::string insert;
  int64_t steps = 0;
  double seconds = 0;
  double steps_per_sec = 0;
  double speedup = 0;        // vs the e=1 run
  double ideal_speedup = 0;  // min(e, R)
  double efficiency = 0;     // speedup / ideal
  int64_t fresh_examples = 0;
  int64_t repeated_examples = 0;
  double realized_echo_factor = 0;
  int64_t upstream_bytes = 0;
  double consumer_idle_fraction = 0;
  // The part of the run the trainer loop spent neither waiting for a batch
  // nor in its steps: ~0 when it has its CPU, large when other load takes it.
  double trainer_lost_fraction = 0;
  std::string stage_stats;         // FormatStatsTable() of the pipeline at the end
  double rate_ratio_estimate = 0;  // adaptive echo's R̂ at the end of the run (0 otherwise)
  // --insert=auto: the planner's decisions with their reasons, in order, and
  // its placement and factor at the end of the run.
  std::vector<std::string> decisions;
  std::string auto_insert;
  double auto_echo = 0;
  int repeat = 0;  // which repeat this run belongs to (0-based)

  // Set on the points of SummarizePoints() (regime.h), one per factor over
  // the repeats: the fields above hold the medians (see there), these the rest.
  int repeats = 1;
  std::vector<double> steps_per_sec_samples;  // one per repeat, in repeat order
  double steps_per_sec_min = 0;
  double steps_per_sec_max = 0;
  double efficiency_min = 0;  // over the repeats, each against its repeat's baseline
  double efficiency_max = 0;
  bool out_of_regime = false;  // set by CheckRegime()
};

// Runs `config.steps` emulated steps with echo factor `echo` (after one
// warm-up batch and 50 warm-up steps); for --insert=adaptive, `echo` is the cap m, for
// --insert=auto the largest factor it may choose. `progress(step)`
// is called after every step.
absl::StatusOr<RunResult> RunOnce(const BenchConfig& config, const Source& source, double echo,
                                  const std::function<void(int64_t)>& progress);

// The upstream alone (read, decode, throttle, prefetch), drained as fast as
// possible: its time per batch divided by the step time, i.e. the R it
// actually delivers.
absl::StatusOr<double> MeasureUpstreamRatio(const BenchConfig& config, const Source& source);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_RUN_H_
