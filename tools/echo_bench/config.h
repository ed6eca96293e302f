// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's command line: parsing and validation.
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_CONFIG_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/echo_placement.h"

namespace dataecho::bench {

// --insert: the library's echo placement (echo_placement.h).
using Insert = EchoPlacement;

struct BenchConfig {
  std::string source;  // URI or glob; empty = embedded Fashion-MNIST over loopback HTTP
  std::string format = "tfrecord";  // tfrecord | idx (idx: --source=IMAGES,LABELS)
  // fashion_mnist (28x28 images, random crop + flip) or imagenet (the
  // ImageNet-like JPEG set: decode, RandomResizedCrop 224 + flip, FP16).
  std::string dataset = "fashion_mnist";
  std::vector<double> echo = {1, 2, 3, 4, 6, 8};
  Insert insert = Insert::kBeforeAugment;
  double max_echo = 4;  // adaptive mode's cap on emissions per item; auto's largest factor
  // --insert=auto: what its plans optimize (progress | speed | quality, echo_planner.h).
  EchoPrefer prefer = EchoPrefer::kProgress;
  // --grid: every fixed placement x --echo factor and auto (--max_echo) in
  // one run, rotating; reports auto / best fixed steps/s (grid.h).
  bool grid = false;
  double upstream_ratio = 6;  // R: upstream time per batch / step time (0 = unthrottled)
  // With upstream_ratio 0: step_ms is set so that the measured R is this (0 = keep step_ms).
  double target_ratio = 0;
  double step_ms = 2;  // emulated training step
  int64_t batch_size = 128;
  int64_t shuffle_buffer = 2048;
  // The ImageNet-shaped source's decode Map and augmentation Map each run on
  // this many threads; 0: decode on the CPUs left to the pipeline,
  // augmentation inline (in the thread that shuffles and batches).
  int pipeline_threads = 0;
  int64_t steps = 300;
  uint64_t seed = 1;
  double latency_ms = 5;  // added latency per request of the embedded HTTP server
  std::string data_dir;   // where the embedded dataset's shards are cached
  std::string json;       // write results as JSON here
  std::string trace;      // write a timeline of the run here (trace.h)
  std::string plot;       // write the speedup plot (SVG) here
  bool progress = true;
  bool stats = false;       // print every stage's statistics after each run
  bool pin_trainer = true;  // keep one CPU for the emulated trainer (see ReserveTrainerCpu)
  int cpus = 0;  // run on the first N CPUs it may use (0: all); once running, the CPUs it had
  // Repeats and the regime check (regime.h).
  int repeats = 3;                   // runs per factor, in a rotating order
  double baseline_tolerance = 0.05;  // |baseline / nominal - 1| above this: a warning
  double max_efficiency = 1.03;      // an efficiency above this: a warning
  double max_spread = 0.10;          // a point's (max - min) / median steps/s above this: a warning
  double max_trainer_lost = 0.05;    // a point's trainer_lost_fraction above this: a warning
  bool strict = false;               // warnings make the exit status kExitOutOfRegime
};

// echo_bench's exit status: 0 success, 1 a run failed (data, storage, I/O),
// kExitUsage for invalid flags, kExitOutOfRegime for regime warnings under --strict.
inline constexpr int kExitUsage = 2;
inline constexpr int kExitOutOfRegime = 3;

inline std::string_view InsertName(Insert insert) { return EchoPlacementName(insert); }

// Parses argv (argv[0] is the program's name) through echo_bench's Abseil
// flags (ABSL_FLAG, defined in config.cc with BenchConfig's defaults; each
// call starts from the defaults) and checks the values. --help returns a
// status with code kCancelled (not an error: the caller prints Usage() and
// exits 0). Invalid input returns INVALID_ARGUMENT with a message naming the
// flag. Not thread-safe (flags are process-wide).
absl::StatusOr<BenchConfig> ParseArgs(int argc, char** argv);

// The --help text: what the program does and every flag with its help text
// and default.
std::string Usage();

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_CONFIG_H_
