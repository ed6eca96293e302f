// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Auto placement's decision on a decode Map's workers
// (EchoedBatchesOptions::decode_parallelism, echo_placement.h): when the
// decode Map is the bottleneck and the cores the pipeline may use could run
// more of it, the planner (internal/auto_placement.h) raises its workers
// through its MapParallelism, within the RAM budget, and notes why. Used by
// src/internal/auto_placement.cc only.
//
//   DecodeWorkersPlanner decode(control);       // the decode Map's MapParallelism
//   // every planner window:
//   std::optional<std::string> note = decode.Decide(now_ns, context);
//
// Thread safety: PlanDecodeWorkers is a pure function; a DecodeWorkersPlanner
// is used by one thread (the planner's).
#ifndef DATAECHO_SRC_INTERNAL_DECODE_WORKERS_H_
#define DATAECHO_SRC_INTERNAL_DECODE_WORKERS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "dataecho/map_parallelism.h"

namespace dataecho::internal {

// The decode Map over one planner window.
struct DecodeWindow {
  std::string name;            // the Map's
  int workers = 0;             // at the window's end (0: inline)
  double wall_s = 0;           // the window's length
  int64_t elements = 0;        // items it decoded in it
  double busy_s = 0;           // in fn, summed over its workers
  double consumer_wait_s = 0;  // its consumer waited for a result
  double input_wait_s = 0;     // it waited for its input
  int64_t item_bytes = 0;      // bytes of one decoded item
};

// What the planner measured over the same window.
struct DecodeContext {
  int cores = 1;                // the cores the pipeline may use
  double cpu_per_fresh = 0;     // the pipeline's CPU per fresh item (s), decoding included
  bool upstream_bound = false;  // the boundary Prefetch hardly blocked (the upstream is slower)
  int64_t ram_left = 0;         // the bytes of the RAM budget echo's buffer leaves
};

// A window needs this many decoded items to decide on (fewer: a warm-up or a stall).
inline constexpr int64_t kDecodeMinElements = 16;

// The workers the decode Map should run: more than window.workers only when
// (1) there were enough items (kDecodeMinElements), (2) the Map is the
// bottleneck: the upstream is (context.upstream_bound), the Map's workers were
// busy at least 70 % of the window and waited for their input under 30 % of
// it, and (parallel) its consumer waited for it at least 10 %, and (3) the
// cores could run more of it: at `busy_s / elements` per item on n workers the
// Map decodes n / busy items a second, the cores `cores / cpu_per_fresh`;
// it takes the workers that match the cores (at most `cores`), as many as the
// RAM left allows (a worker holds up to 2 hand-off batches of results,
// internal/map_tuning.h). `*reason` (if not null) says why, raised or not.
int PlanDecodeWorkers(const DecodeWindow& window, const DecodeContext& context,
                      std::string* reason);

// Reads the decode Map's figures at every planner window and raises its
// workers when PlanDecodeWorkers says so.
class DecodeWorkersPlanner {
 public:
  explicit DecodeWorkersPlanner(std::shared_ptr<MapParallelism> control)
      : control_(std::move(control)) {}

  // The window since the last call: a note (the decision and its reason) when
  // it raised the workers. The window after a raise is not decided on (it
  // spans the change).
  std::optional<std::string> Decide(int64_t now_ns, const DecodeContext& context);
  // The decode Map's workers (0 inline; -1 before it is attached).
  int workers() const { return workers_; }

 private:
  const std::shared_ptr<MapParallelism> control_;
  std::optional<MapParallelism::Reading> last_;
  int64_t last_ns_ = 0;
  bool settling_ = false;
  int workers_ = -1;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_DECODE_WORKERS_H_
