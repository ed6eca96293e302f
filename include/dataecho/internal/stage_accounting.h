// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/stage_accounting.h: the figures every stage keeps for its StageStats
// (stats.h; StageTotals, public in stage_kit.h), adding up the stats of
// sources made anew, and a blocking wait that accounts the time it blocks.
// Internal: Map, Prefetch, Shuffle and Throttle are built on it.
//
//   internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);  // or <internal::Counter>
//   ...
//   internal::AwaitTimed(mu_, this, &MyStage::Ready, totals_.consumer_wait_ns);
//   ...
//   return totals_.Report(options_.name, {{"depth", options_.depth}});
//
// Thread safety: StageTotals<int64_t> is a plain value (guard it with the
// stage's mutex); StageTotals<Counter> has one writer and any number of
// readers (internal/counter.h).
#ifndef DATAECHO_INTERNAL_STAGE_ACCOUNTING_H_
#define DATAECHO_INTERNAL_STAGE_ACCOUNTING_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage_kit.h"
#include "dataecho/stats.h"

namespace dataecho::internal {

// The figures every stage keeps: StageTotals<Counter> or StageTotals<int64_t>
// (stage_kit.h, where stages of users' own find it).
using ::dataecho::StageTotals;

// Adds the rows `more` (a stage chain's stats, source first) to `total`,
// row by row: when a source is made anew for each epoch (RepeatSource), its
// rows add up over the pipeline's life. Elements, bytes, waits and counted
// extra figures add up; levels and settings ("depth", "queued", "buffer_size",
// "factor", ...) take the newest value, peaks ("peak_*") the largest, ratios
// ("realized_factor", "repeat_fraction") are recomputed from the sums. If the
// rows do not match (another count or other names) `total` becomes `more`.
DATAECHO_EXPORT void AddStageStats(std::vector<StageStats>* total,
                                   const std::vector<StageStats>& more);

// Renames the second and later stages of the same name "name#2", "name#3",
// ... (source first), so that every row of a pipeline's stats is named once.
DATAECHO_EXPORT void MakeStageNamesUnique(std::vector<StageStats>* stats);

// Waits under `mu` until `(object->*ready)()` holds and adds the time it
// blocked to `waited_ns`. The clock is read only when it actually blocks (a
// clock read is not free on a hand-off path).
template <typename T>
void AwaitTimed(absl::Mutex& mu, const T* object, bool (T::*ready)() const, int64_t& waited_ns)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  if ((object->*ready)()) return;
  const int64_t t0 = NowNanos();
  mu.Await(absl::Condition(object, ready));
  waited_ns += NowNanos() - t0;
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_STAGE_ACCOUNTING_H_
