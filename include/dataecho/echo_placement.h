// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_placement.h: where echo goes in a training input pipeline, as an
// option, and the one builder for the pipeline around it.
//
// A training input reads and decodes upstream, behind a prefetch boundary,
// then augments, shuffles and batches. Echo goes at one of four places
// (the data-echoing paper's three insertion points, and ours):
//
//   decoded ─► [Echo] ─► Map(augment) ─► [Echo] ─► Shuffle ─► Batch ─► [Echo] ─► Prefetch
//              before_augment            after_augment                  batch
//              adaptive (AdaptiveEcho, repeats only on demand)
//
//   kBeforeAugment  example echoing, then augmentation: each copy is augmented anew
//                   (usually the best);
//   kAfterAugment   augmentation, then example echoing: the copies are identical;
//   kBatch          batch echoing: whole batches repeated after Batch;
//   kAdaptive       like kBeforeAugment, but an AdaptiveEchoStage that repeats
//                   only while the upstream has nothing ready and the consumer
//                   needs a batch (its demand gate watches the final Prefetch's
//                   queue: PrefetchOptions::level). It knows the regime: a planner
//                   at the top measures the costs (as for kAuto); while a copy
//                   made before the augmentation is cheap it repeats as always;
//                   when such copies slow the fresh items (augmented on the cores
//                   that decode), it stops repeating there and echoes whole
//                   batches after Batch instead, at the planned factor (at most
//                   adaptive.max_factor), each decision a note of its stats.
//   kAuto           an echo stage at each of the three places, all but one passing
//                   through; a planner at the top measures the costs while the
//                   pipeline runs (CPU per fresh item, per augmentation, per row;
//                   the consumer's step; the upstream's time per item; the cores
//                   the pipeline may use) and sets placement and factor, again
//                   when the costs change, within a RAM budget, reporting every
//                   decision with its reason in the stats (echo_planner.h,
//                   `auto_placement`: prefer speed, quality or progress, max_factor, ...);
//                   given the decode Map's `decode_parallelism`, also its workers.
//
//   auto decoded = dataecho::From(std::move(records))
//       .Map(Decode, {.parallelism = 4})
//       .Prefetch({.depth = 256});                            // the boundary
//   dataecho::Pipeline<dataecho::Batch> batches = dataecho::EchoedBatches(
//       std::move(decoded), Augment,
//       {.placement = dataecho::EchoPlacement::kBeforeAugment,
//        .echo = {.factor = 2, .seed = 1},
//        .shuffle = {.buffer_size = 2048, .seed = 2},
//        .batch = {.batch_size = 128},
//        .prefetch = {.depth = 2}});
//   if (!batches.status().ok()) return batches.status();
//
// The names ("before_augment", "after_augment", "batch", "adaptive", "auto") are what
// command-line flags and JSON output use: EchoPlacementName, ParseEchoPlacement.
//
// Thread safety: the functions are thread-safe; the pipeline they build is
// used as any pipeline (pipeline.h).
#ifndef DATAECHO_ECHO_PLACEMENT_H_
#define DATAECHO_ECHO_PLACEMENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "dataecho/batch.h"
#include "dataecho/echo_options.h"
#include "dataecho/echo_planner.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/map.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/pipeline.h"
#include "dataecho/prefetch.h"
#include "dataecho/shuffle.h"

namespace dataecho {

enum class EchoPlacement {
  kBeforeAugment,  // example echoing, then augmentation
  kAfterAugment,   // augmentation, then example echoing
  kBatch,          // batch echoing, after Batch
  kAdaptive,       // adaptive example echoing before augmentation
  kAuto,           // placement and factor chosen from measured costs (echo_planner.h)
};

// Every placement, in the order above.
inline constexpr EchoPlacement kEchoPlacements[] = {
    EchoPlacement::kBeforeAugment, EchoPlacement::kAfterAugment, EchoPlacement::kBatch,
    EchoPlacement::kAdaptive, EchoPlacement::kAuto};

// "before_augment", "after_augment", "batch", "adaptive" or "auto".
DATAECHO_EXPORT std::string_view EchoPlacementName(EchoPlacement placement);
// The placement of a name above; INVALID_ARGUMENT for any other name.
DATAECHO_EXPORT absl::StatusOr<EchoPlacement> ParseEchoPlacement(std::string_view name);

// The augmentation applied to every element (random crop, flip, ...).
using AugmentFn = std::function<absl::StatusOr<Example>(Example)>;

struct EchoedBatchesOptions {
  EchoPlacement placement = EchoPlacement::kBeforeAugment;
  // The fixed placements' echo. It is a stage at every factor, 1 included
  // (where it passes elements through unchanged).
  EchoOptions echo;
  // kAdaptive's echo (max_factor = m, pool_size, seed, ...). Without a
  // repeat_gate of its own it gets the demand gate below.
  AdaptiveEchoOptions adaptive;
  // kAdaptive's demand gate: repeat only while fewer than this many batches
  // wait in the final Prefetch's queue. 0 = no gate (unless adaptive has one).
  int64_t gate_below = 2;
  // The Map that runs the augmentation.
  MapOptions augment;
  ShuffleOptions shuffle;
  BatchOptions batch;
  // The final Prefetch (the consumer's queue). For kAdaptive its `level` is
  // what the demand gate reads; one is made if it is null.
  PrefetchOptions prefetch;
  // kAuto's planner: the largest factor, speed, quality or progress, the cores, the RAM
  // budget, how often it decides (echo_planner.h). Its seed draws the copies.
  // kAdaptive's planner uses it too, with adaptive.max_factor as max_factor.
  AutoPlacementOptions auto_placement;
  // kAuto: the decode Map's parallelism_control (map.h, map_parallelism.h),
  // the Map in `decoded` that decodes. When that Map is the bottleneck and
  // the pipeline's cores could run more of it, the planner raises its workers
  // (within auto_placement.ram_budget_bytes) and notes why, as its other
  // decisions. Null: the decode is left as it is.
  std::shared_ptr<MapParallelism> decode_parallelism;
  // The fixed placements: add an echo_diagnostics stage at the top
  // (echo_diagnostics.h: duplicate rows per batch, distance between copies,
  // fresh rows per step). kAuto and kAdaptive report them in their planner's row.
  bool diagnostics = false;
};

// Builds the rest of the training input on `decoded` (which should end in a
// Prefetch: echo serves repeats while it reads ahead): augmentation (skipped
// if `augment` is empty), shuffle, batch, the final prefetch, and echo where
// `options.placement` says. An invalid option makes the returned pipeline
// hold INVALID_ARGUMENT (see pipeline.h), as does an unknown placement.
// Checkpoints (docs/checkpoint.md): every placement saves and restores.
// kAuto's state carries the placement's decisions (the placed echoes' factor
// changes), kAdaptive's also the adaptive echo's fresh/repeat decisions taken
// after the Prefetch's snapshot; they are replayed for the batches in flight
// at the save, then the restored planner and echo decide afresh.
DATAECHO_EXPORT Pipeline<Batch> EchoedBatches(Pipeline<Example> decoded, AugmentFn augment,
                                              EchoedBatchesOptions options);

}  // namespace dataecho

#endif  // DATAECHO_ECHO_PLACEMENT_H_
