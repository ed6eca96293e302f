// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/seed_stream.h: the seed stream of the pipelines built on a
// thread. dataecho.torch sets it (dataecho._seed_stream(k)) to a worker's
// place in the job while the user's build() runs, so that workers whose
// build() gives shuffle and echo the same seeds still draw differently: a
// worker's records differ already (job-wide source_index, and so the draws
// keyed by it: crops, flips), but a shuffle's slot draws and an echo's
// fractional-factor draws come from its seed and the epoch alone.
//
//   ShuffleOptions o = ...;
//   o.seed = ForSeedStream(o.seed);  // o.seed itself while no stream is set
//
// Likewise the planner memory: dataecho.torch sets it
// (dataecho._planner_memory(dict)) to the echo planner's costs and decision
// of the worker's last epoch while build() runs, and echoed_batches() with
// placement 'auto' or 'adaptive' starts its planner from it
// (AutoPlacementOptions::start_from): auto echo carries across epochs whose
// pipelines are built afresh.
//
// Thread safety: the stream and the memory are per thread (build() runs on one).
#ifndef DATAECHO_PYTHON_SRC_SEED_STREAM_H_
#define DATAECHO_PYTHON_SRC_SEED_STREAM_H_

#include <cstdint>
#include <optional>

#include "dataecho/echo_planner.h"

namespace dataecho::python {

// Sets (a value) or clears (std::nullopt) this thread's seed stream.
void SetSeedStream(std::optional<uint64_t> stream);

// `seed` mixed with this thread's seed stream; `seed` itself when none is set.
uint64_t ForSeedStream(uint64_t seed);

// The planner memory echoed_batches() starts from (none: measure first).
void SetPlannerMemory(std::optional<EchoPlannerMemory> memory);
const std::optional<EchoPlannerMemory>& PlannerMemory();

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_SEED_STREAM_H_
