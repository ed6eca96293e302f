// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_planner.h: where echo pays, chosen from measured costs.
//
// A copy costs nothing on an I/O-bound upstream and costs the augmentation's
// CPU on a CPU-bound one, on the very cores that decode the fresh items. The
// planner takes what a running pipeline measured (EchoCosts: CPU per fresh
// item upstream, per augmentation, per batched row; the consumer's step; the
// upstream's time per item; the cores the pipeline may use) and predicts the
// consumer's step rate for every placement and factor:
//
//   per batch of B rows at factor e, f = B / e fresh items:
//     downstream CPU  D = before_augment: B (aug + row)
//                         after_augment:  f aug + B row
//                         batch:          f (aug + row)      (a batch copy is a handle)
//     upstream CPU    U = f up
//     step time       T = max(step, D, (D + U) / cores, f up_time)
//
// (D runs on one thread: the final Prefetch's; up_time is the upstream's
// measured time per item while it ran). A step is not worth the same at
// every placement: a copy echoed before augmentation gets its own crop and
// flip, one echoed after it is the same augmented item again, and a batch
// copy repeats a whole batch, and the more copies of an example a model sees,
// the less each teaches. Data echoing exists to cut the wall-clock time to a
// target accuracy, so the planner weighs each step by what it is worth, as
// fresh-equivalent examples per second (the rate of training progress):
//
//   progress = steps/s x (B / e) x G_p(e)
//
// B / e fresh examples a step, each worth G_p(e) fresh examples with its
// copies: G_p(e) = F_1 / F_e, the fresh examples a model needs to reach its
// target without echo over those it needs at factor e, placement p
// (AutoPlacementOptions::copy_gains_*, measured on Fashion-MNIST at e = 2, 3
// and 4: docs/results.md, "Value of a copy per placement"; between two
// measured factors it is interpolated, past the last one each further unit of
// factor adds half what the one before added, or keeps falling as the last
// did). Time to the target is F_1 / progress, so the most progress is the
// soonest target. A gain that falls (a copy after augmentation is the same
// augmented example again) or levels off keeps the factor where copies are
// still worth their cost, whatever max_factor allows: with no consumer step at
// all, progress stops rising with the factor once the gain levels off.
//
// It keeps the placements whose echo buffer fits `ram_budget_bytes`, takes
// for each the smallest factor within 2 % of its best rate (plus 10 %
// headroom, at most max_factor; the progress rate under kProgress, else the
// step rate), and then: `prefer = kProgress` (the default) the placement of
// the most progress (the more example-level one within 2 %); `kSpeed` the
// fastest step rate; `kQuality` the most example-level placement
// (before_augment, then after_augment, then batch) within 10 % of the fastest
// step rate. Every plan says why, e.g.
//
//   after_augment echo, e = 2.20: augmenting a copy would cost 0.104 ms of
//   the 1 pipeline core; a copy here costs 0.007 ms; batch echo would step
//   3x faster at e = 6.6, where its copies are worth G = 0.39; predicted
//   134.9 steps/s, 12198 fresh-equivalent examples/s (G = 1.55)
//
//   dataecho::EchoCosts costs = ...;  // measured (EchoedBatches does this)
//   dataecho::EchoPlan plan = dataecho::PlanEcho(costs, {.max_factor = 6});
//   std::cout << plan.reason << "\n";
//
// No fixed table knows a user's model: a trainer that reports its losses
// (Pipeline<Batch>::ReportLoss, loss_feedback.h) lets the planner read what a
// copy is worth on it (the loss of copies against that of fresh rows in the
// same window: AutoPlacementOptions::loss_gap_scale) and weigh the placement
// in use by that instead; with no reports, the table.
//
// EchoedBatches (echo_placement.h) with EchoPlacement::kAuto measures the
// costs while it runs (the consumer's step: the median of a window's times
// between its pulls), plans every `decide_every` batches (fewer when they are
// large: `decide_every_rows`), changes the factor
// when the plan does, the placement when two plans in a row name another one,
// and reports each decision in its stats
// (stats.h: the "echo_planner" row's notes; "decisions" in the JSON).
//
// The pipeline's CPU, as EchoedBatches' planner measures it, is that of the
// threads the pipeline's stages run (StartPipelineThread(), stage_kit.h), not
// the whole process's: the trainer's threads, and those its libraries start
// (a deep-learning framework's), are not read as a slow upstream's.
//
// Thread safety: plain values and pure functions.
#ifndef DATAECHO_ECHO_PLANNER_H_
#define DATAECHO_ECHO_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/export.h"

namespace dataecho {

// What a plan optimizes: the rate of training progress (kProgress, the
// default: steps/s weighted by what a step is worth at its placement and
// factor, AutoPlacementOptions::copy_gains_*: the soonest target accuracy);
// the step rate alone (kSpeed); or the most example-level placement within
// 10 % of the fastest step rate (kQuality: batch echoing repeats whole batches
// and is worth less per step, but how much less it does not weigh).
enum class EchoPrefer { kSpeed, kQuality, kProgress };

// A linear alternative to the gains (AutoPlacementOptions::copy_value_*):
// every copy worth v of a fresh example, G(e) = 1 + (e - 1) v. These were
// the least-squares slopes of the same measurements (docs/results.md), which
// the gains replaced: after augmentation the value falls with the factor.
inline constexpr double kCopyValueBeforeAugment = 0.40;
inline constexpr double kCopyValueAfterAugment = 0.12;
inline constexpr double kCopyValueBatch = 0.0;

// Measured costs, all per unit named, in seconds; 0 = not measured (or free).
struct DATAECHO_EXPORT EchoCosts {
  double upstream_cpu = 0;   // CPU per fresh item upstream (read, decode)
  double augment_cpu = 0;    // CPU per augmentation of one item (fresh or copy)
  double row_cpu = 0;        // CPU per row in shuffle + batch (the rest of the downstream thread)
  double upstream_time = 0;  // the upstream's wall time per fresh item while it ran
  double step = 0;           // the consumer's time per batch, outside Next()
  int64_t batch_rows = 0;    // rows per batch
  int cores = 1;             // cores the pipeline may use
  // Bytes of one decoded item, one augmented item and one batch.
  int64_t item_bytes = 0, augmented_bytes = 0, batch_bytes = 0;
};

// What a planner measured and decided: its smoothed costs, the placement
// (an EchoPlacement as int: 0 before_augment, 1 after_augment, 2 batch) and
// the factor. A planner given one (AutoPlacementOptions::start_from) echoes
// at that placement and factor from its first batch and plans from those
// costs, instead of measuring from nothing with no echo for its first
// 3 windows (AutoPlacementOptions::decide_every): what a pipeline built afresh for every epoch
// (dataecho.torch) carries from one epoch's planner to the next. Its
// "echo_planner" stats row holds these values (placement, factor,
// cost_upstream_cpu_ms, cost_augment_cpu_ms, cost_row_cpu_ms,
// upstream_ms_per_item, step_ms).
struct DATAECHO_EXPORT EchoPlannerMemory {
  EchoCosts costs;
  int placement = 0;
  double factor = 1;
};

struct DATAECHO_EXPORT AutoPlacementOptions {
  // The largest factor a plan may choose. Finite, in [1, 1e6]. Under
  // kProgress the gains keep the factor below it where more copies would not
  // be worth their cost.
  double max_factor = 8;
  EchoPrefer prefer = EchoPrefer::kProgress;
  // Cores the pipeline may use. 0 = the CPUs this process may run on, minus
  // `trainer_cores` (at least 1).
  int pipeline_cores = 0;
  // Cores the trainer keeps for itself (used when pipeline_cores is 0). >= 0.
  int trainer_cores = 1;
  // The most bytes echo's buffers may hold (before_augment: a decoded item;
  // after_augment: an augmented item; batch: a batch). > 0.
  int64_t ram_budget_bytes = int64_t{256} << 20;
  // Batches (not rows) between two plans (a window; one with fewer than 16 fresh items
  // or 4 timed augmentations goes on until it has them). The first plan
  // comes after 3 windows (the first window measured is the warm-up),
  // echoing nothing meanwhile. >= 2.
  int64_t decide_every = 16;
  // ... or, with large batches, a window ends sooner: once it holds this
  // many rows (and at least min(4, decide_every) batches). The same rows a
  // window at any batch size: at 128 rows a batch 16 batches, at 1,024 rows
  // 4 (at 1,024 rows and 16 batches a window, 49k examples went unechoed
  // before the first plan, most of an epoch of Fashion-MNIST). 0: batches
  // only. >= 0.
  int64_t decide_every_rows = 2048;
  // Seed of the per-item draws of fractional factors.
  uint64_t seed = 0;
  // Name of the planning stage in stats.
  std::string name = "echo_planner";
  // G_p(e) = F_1 / F_e at e = 2, 3, 4, ... for each placement (see the file
  // comment; G(1) = 1): what kProgress weighs a step by (every plan reports
  // the progress rate). Fashion-MNIST's MLP to 0.85 test accuracy, means of
  // seeds 1-3 (scripts/copy_values.py prints them with their spread). Each
  // finite and >= 0; empty: copies worth nothing there (G = 1). A model whose
  // copies are worth more or less may set its own.
  std::vector<double> copy_gains_before = {1.66, 1.85, 2.09};
  std::vector<double> copy_gains_after = {1.60, 1.37, 1.12};
  std::vector<double> copy_gains_batch = {1.00, 0.89, 0.75};
  // If set (in [0, 1]), the placement's gains are linear instead:
  // G(e) = 1 + (e - 1) v (see kCopyValueBeforeAugment).
  std::optional<double> copy_value_before;
  std::optional<double> copy_value_after;
  std::optional<double> copy_value_batch;
  // Loss feedback (loss_feedback.h, Pipeline<Batch>::ReportLoss): in a
  // window of steps where copies were made at the placement p in use, the
  // trainer's losses give the loss of a copy, L_c, and of a fresh row, L_f;
  // a copy is then worth v = 1 - loss_gap_scale x (1 - L_c / L_f) of a
  // fresh example (clamped to [0, 1]: a copy the model has memorized, L_c
  // near 0, is worth nothing; one as hard as a fresh row, as much). The
  // windows' values are smoothed (half each new window), and the plan
  // weighs p's steps by G_p(e) = 1 + (e - 1) v instead of copy_gains_* (and
  // a placement that repeats more of an example, after_augment below
  // before_augment, batch below both, by no more than that). Finite, > 0.
  double loss_gap_scale = 4;
  // Rows a window's reports must cover (fresh rows and copies) before the
  // planner learns from them. >= 1.
  int64_t loss_min_rows = 256;
  // An earlier planner's costs and decision to start from (see
  // EchoPlannerMemory); none: measure first. Its placement in [0, 2], its
  // factor in [1, max_factor], its costs finite and >= 0.
  std::optional<EchoPlannerMemory> start_from;

  absl::Status Validate() const;
};

// The placements a plan chooses among: kBeforeAugment, kAfterAugment, kBatch
// (as ints of EchoPlacement, echo_placement.h, to keep this header free of it).
struct DATAECHO_EXPORT EchoPlan {
  int placement = 0;  // static_cast<int>(EchoPlacement)
  double factor = 1;
  double steps_per_sec = 0;  // predicted
  // The fastest placement by step rate (at its own best factor for speed,
  // PlacementFactor) and its predicted step rate.
  double best_steps_per_sec = 0;
  int best_placement = 0;
  // Predicted fresh-equivalent examples per second (see the file comment).
  double progress_per_sec = 0;
  std::string reason;
};

// The predicted time per batch (seconds) of `placement` (an EchoPlacement as
// int: 0 before_augment, 1 after_augment, 2 batch) at factor `e`.
DATAECHO_EXPORT double PredictStepTime(const EchoCosts& costs, int placement, double e);

// The factor a plan would take for `placement` alone: the smallest within
// 2 % of that placement's best predicted rate (plus 10 % headroom), at most
// max_factor. For before_augment on a CPU-bound upstream this is where
// copies stop raising the step rate (adaptive echo's cap, echo_placement.h).
DATAECHO_EXPORT double PlacementFactor(const EchoCosts& costs, int placement, double max_factor);

// G_p(e) of `placement` at factor `e` under `options` (the file comment).
DATAECHO_EXPORT double CopyGain(const AutoPlacementOptions& options, int placement, double e);

// The predicted rate of training progress of `placement` at factor `e`:
// fresh-equivalent examples per second, steps/s x (B / e) x G_p(e) with the
// gains of `options` (CopyGain) ...
DATAECHO_EXPORT double PredictProgress(const EchoCosts& costs, int placement, double e,
                                       const AutoPlacementOptions& options);
// ... or with every copy worth `copy_value` of a fresh example:
// G(e) = 1 + (e - 1) copy_value.
DATAECHO_EXPORT double PredictProgress(const EchoCosts& costs, int placement, double e,
                                       double copy_value);

// The plan for `costs` (see the file comment). REQUIRES: options.Validate().
DATAECHO_EXPORT EchoPlan PlanEcho(const EchoCosts& costs, const AutoPlacementOptions& options);

// "speed", "quality" or "progress"; ParseEchoPrefer: INVALID_ARGUMENT for another name.
DATAECHO_EXPORT const char* EchoPreferName(EchoPrefer prefer);
DATAECHO_EXPORT absl::Status ParseEchoPrefer(const std::string& name, EchoPrefer* prefer);

}  // namespace dataecho

#endif  // DATAECHO_ECHO_PLANNER_H_
