// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// stats.h: per-stage statistics and the pipeline-wide report.
//
// Every stage reports a `StageStats`: elements and bytes it emitted, the time
// it spent blocked on its input, the time its consumer spent waiting inside
// its Next(), and stage-specific figures in `extra` (Echo's fresh/emitted
// counts and realized factor, Shuffle's bytes held, ...). A pipeline's report
// lists its stages from the source to the consumer:
//
//   std::vector<dataecho::StageStats> stats = pipeline.Stats();
//   std::cout << dataecho::FormatStatsTable(stats);   // aligned text table
//   std::string json = dataecho::StatsToJson(stats);  // [{"stage": ...}, ...]
//
// Durations that a stage does not measure are reported as zero; each stage's
// header says which it measures.
#ifndef DATAECHO_STATS_H_
#define DATAECHO_STATS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "dataecho/export.h"

namespace dataecho {

struct DATAECHO_EXPORT StageStats {
  std::string name;              // e.g. "echo"
  int64_t elements = 0;          // elements emitted
  int64_t bytes = 0;             // payload bytes emitted
  absl::Duration input_wait;     // time blocked waiting for the input stage
  absl::Duration consumer_wait;  // time the consumer spent waiting in Next()
  int threads = 0;               // threads the stage runs; 0 = it runs in its consumer's thread
  std::vector<std::pair<std::string, double>> extra;  // stage-specific figures

  // Value of extra figure `key`, or `fallback`.
  double Extra(std::string_view key, double fallback = 0) const;
};

// One row per stage, source first.
DATAECHO_EXPORT std::string FormatStatsTable(const std::vector<StageStats>& stats);
// A JSON array of objects: {"stage", "elements", "bytes", "input_wait_s",
// "consumer_wait_s", plus every extra figure by its key}.
DATAECHO_EXPORT std::string StatsToJson(const std::vector<StageStats>& stats);

}  // namespace dataecho

#endif  // DATAECHO_STATS_H_
