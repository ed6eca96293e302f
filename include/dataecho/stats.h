// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// stats.h: per-stage statistics and the pipeline-wide report.
//
// Every stage reports a `StageStats`; a pipeline's report lists its stages
// from the source to the consumer, each name once ("map", "map#2", ...; give
// stages names through their options' `name`):
//
//   std::vector<dataecho::StageStats> stats = pipeline.Stats();
//   std::cout << dataecho::FormatStatsTable(stats);   // table + verdict lines
//   std::string json = dataecho::StatsToJson(stats);  // [{"stage": ...}, ...]
//
// THE COLUMNS (the same meaning for every stage; docs/stats.md explains how
// to read a table):
//   elements       elements the stage emitted (Batch: batches), over the
//                  pipeline's whole life (all epochs)
//   bytes          their payload bytes (ElementTraits<T>::ByteSize)
//   input_wait     time the stage was BLOCKED on the stage below: in the
//                  input's Next() because the input had no element ready
//                  (it waits for its own threads: a Prefetch with an empty
//                  queue, a parallel Map, an interleaved record source, or a
//                  stage above one of those). Time a synchronous input spends
//                  computing an element in the caller's thread is not
//                  waiting: it is that input's own time. Sources have no
//                  input: 0.
//   consumer_wait  time the stage's consumer was blocked in its Next()
//                  because this stage, running on its own threads, had no
//                  element ready. 0 for stages that run in the consumer's
//                  thread (threads = 0).
//   threads        threads the stage runs (Prefetch 1, Map its parallelism,
//                  an interleaved source its cycle_length); 0 = it runs in
//                  its consumer's thread
//   extra          stage figures, in each stage's header; among them the
//                  stage's own time where it is measured: "busy_s" (Map: in
//                  the function, summed over workers; a sequential record
//                  source: reading) and "throttled_s" (Throttle: delaying).
//
// So a blocked interval shows twice, as the consumer_wait of an asynchronous
// stage and as the input_wait of the stage above it, and the table reads top
// down: the consumer waited at the topmost stage with threads; that stage's
// threads waited on the next one below (its consumer_wait), or worked
// (busy_s, throttled_s of the stages between).
//
// THE VERDICT (FormatStatsVerdict, printed under the table): one line naming
// the bottleneck, found by following the consumer's wait down as above: at
// each asynchronous stage, if its threads waited on the next one below longer
// than any stage between worked, the wait continues there; otherwise the
// stage that worked longest is the bottleneck, with its share of the measured
// time behind the consumer's wait, and whether it is upstream or downstream
// of Echo (only an upstream bottleneck is helped by echoing). Then, for each
// echo stage, its realized factor against min(e, R), the ideal speedup, with
// R the measured rate ratio ("rate_ratio"); an echo stage that never waited
// for its input says that the upstream kept up.
//
//   bottleneck: tfrecord_source (upstream of echo: echoing can help), 83 % of
//       the measured time behind the consumer's 4.210 s wait
//   echo: realized factor 2.00 against min(e, R) = 2.00 (R = 3.10 measured)
//
// THE CONSUMER. A Pipeline's top row carries what the pipeline measured at
// its consumer's pulls: "consumer_pulls", "consumer_step_s" (time between
// pulls, outside Next(): the trainer's own steps) and "consumer_in_next_s"
// (time inside Next() after the first pull); both are sampled (every pull of
// a Batch pipeline, one in 16 at random otherwise, sparser where a pull and
// a step take under ~1 us) and scaled. The first pull, the
// pipeline filling from empty, is "consumer_first_s", apart: a start is not a
// step that fails to keep up. When the consumer spent less than 10 % of
// its time inside Next(), or the top Prefetch's producer sat on a full queue
// longer than the consumer waited, the verdict names the consumer as the
// bottleneck. R is then measured, not guessed: R = (upstream time per fresh
// item) / (consumer time per element at the echo), with the upstream's time
// the time its boundary Prefetch was not blocked on a full queue, per item it
// delivered, and the consumer's time consumer_step_s over the elements echo
// emitted (R < 1: the upstream is faster than the trainer). Without those
// figures the echo stage's own estimate "rate_ratio" is used.
//
// Thread safety: plain values and functions.
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
  // Lines of text the stage reports besides its figures: auto echo's
  // decisions with their reasons (echo_planner.h). Printed under the table,
  // "decisions" in the JSON.
  std::vector<std::string> notes;

  // Value of extra figure `key`, or `fallback`.
  double Extra(std::string_view key, double fallback = 0) const;
};

// One row per stage, source first, then the verdict lines.
DATAECHO_EXPORT std::string FormatStatsTable(const std::vector<StageStats>& stats);
// The verdict lines alone (see the file comment), each ending in a newline.
DATAECHO_EXPORT std::string FormatStatsVerdict(const std::vector<StageStats>& stats);
// A JSON array of objects: {"stage", "elements", "bytes", "input_wait_s",
// "consumer_wait_s", "threads", plus every extra figure by its key, plus
// "decisions": [...] (the notes) for a stage that has notes}.
DATAECHO_EXPORT std::string StatsToJson(const std::vector<StageStats>& stats);

}  // namespace dataecho

#endif  // DATAECHO_STATS_H_
