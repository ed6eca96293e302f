// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The stages behind EchoPlacement::kAuto
// (echo_placement.h, echo_planner.h), and the planner of regime-aware
// adaptive echo (kAdaptive). Used by src/echo_placement.cc only.
//
//   decoded ─► [echo:before_augment] ─► Map(augment, metered) ─► [echo:after_augment]
//       ─► Shuffle ─► Batch ─► [echo:batch] ─► Prefetch ─► echo_planner ─► consumer
//
// The three placed echo stages read their factor from one EchoControl (1 =
// pass through); the planner, at the top in the consumer's thread, measures
// the costs (EchoCosts) every `decide_every` batches, asks PlanEcho and sets
// the factors. CPU is measured with the thread CPU clock: around sampled
// augmentations, at every call of the batch echo (the thread that builds the
// batches), and of all the pipeline's threads (StartPipelineThread(),
// stage_kit.h; the rest is the upstream's): not the process's, whose other
// threads (the trainer's, its framework's) are not the pipeline's.
//
// Thread safety: EchoControl's members are atomics; the stages are stages.
#ifndef DATAECHO_SRC_INTERNAL_AUTO_PLACEMENT_H_
#define DATAECHO_SRC_INTERNAL_AUTO_PLACEMENT_H_

#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/echo_planner.h"
#include "dataecho/example.h"
#include "dataecho/internal/decision_journal.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

// Which placed echo: before_augment, after_augment, batch (EchoPlacement's values).
inline constexpr int kPlacedBefore = 0, kPlacedAfter = 1, kPlacedBatch = 2;

// What the placed stages and the metered augmentation share with the planner.
struct EchoControl {
  std::atomic<double> factor[3] = {1.0, 1.0, 1.0};
  // Fresh items (batches for kPlacedBatch) and their bytes, per placed echo.
  std::atomic<int64_t> fresh[3] = {0, 0, 0};
  std::atomic<int64_t> fresh_bytes[3] = {0, 0, 0};
  // Rows of the fresh batches built.
  std::atomic<int64_t> rows_built{0};
  // Augmentations: all, and the sampled ones with their thread CPU time.
  std::atomic<int64_t> augment_calls{0};
  std::atomic<int64_t> augment_sampled{0};
  std::atomic<int64_t> augment_sampled_cpu_ns{0};
  // The thread that builds batches: its CPU time so far (thread CPU clock),
  // read at every call of the batch echo.
  std::atomic<int64_t> downstream_cpu_ns{0};
  // Is the augmentation run on the batch-building thread (parallelism 0)?
  bool augment_inline = true;
  // Regime-aware adaptive echo (EchoPlacement::kAdaptive): its repeats
  // before augmentation are allowed while the realized factor of the fresh
  // batches (`realized_before`, kept by the planner) is below `before_cap`.
  std::atomic<double> before_cap{1e9};
  std::atomic<double> realized_before{1.0};
  // kAdaptive: the adaptive echo's decisions after its snapshot's, which the
  // planner carries in the state (internal/decision_journal.h).
  std::shared_ptr<DecisionJournal> journal;
  // kAuto: the decode Map's workers, raised by the planner (null: left alone;
  // internal/decode_workers.h).
  std::shared_ptr<MapParallelism> decode;
  // Checkpoints: the decisions as data. Each placed echo logs the factor
  // changes it applied, at the index of the fresh item where each took
  // effect (`changes`), and counts the fresh items it took (`taken`, its
  // position). The planner's state carries them (the part taken after the
  // Prefetch's snapshot is known only to the consumer's side); a restore sets
  // `replay_until` to the positions at the save, so that items made again
  // before them get the logged factors, and later ones read `factor` (the
  // planner's, restored, then decided afresh).
  struct FactorChange {
    int64_t fresh = 0;  // the index of the fresh item it took effect at
    double factor = 1;
  };
  mutable absl::Mutex log_mu;
  std::vector<FactorChange> changes[3] ABSL_GUARDED_BY(log_mu);
  int64_t replay_until[3] ABSL_GUARDED_BY(log_mu) = {0, 0, 0};
  std::atomic<int64_t> taken[3] = {0, 0, 0};
  bool RepeatBeforeAllowed() const {
    return realized_before.load(std::memory_order_relaxed) <
           before_cap.load(std::memory_order_relaxed);
  }
};

// The largest echo factor (echo_options.h's bound) and fresh-item position a
// state may hold.
inline constexpr double kMaxEchoFactor = 1e6;
inline constexpr uint64_t kMaxStatePosition = uint64_t{1} << 62;

// Checkpoints (the planner's section, before its input's): per placed echo,
// its position (fresh items taken), its factor changes before that position
// and its factor now. RestoreFactorLogs sets them back with `replay_until`
// at the positions; DATA_LOSS naming `name` for a change out of order or a
// factor outside [1, kMaxEchoFactor]. (src/internal/factor_log.cc)
void SaveFactorLogs(EchoControl& control, StateWriter& w);
absl::Status RestoreFactorLogs(EchoControl& control, const std::string& name, StateReader& r);

// A CPU clock's time in nanoseconds (0 if it cannot be read), and the
// calling thread's. (src/pipeline_threads.cc)
int64_t CpuClockNanos(clockid_t clock);
int64_t ThreadCpuNanos();
// The CPU so far of the threads StartPipelineThread() marked (stage_kit.h),
// ended ones included, but the calling thread's. (src/pipeline_threads.cc)
int64_t PipelineThreadsCpuNanos();
// The CPUs this process may run on.
int AvailableCpus();

// A fixed echo whose factor is control->factor[slot], read at every fresh
// item (copies back to back, per-item draws as EchoStage's). Named
// "echo:before_augment", "echo:after_augment" or "echo:batch".
StagePtr<Example> MakePlacedEcho(StagePtr<Example> input, std::shared_ptr<EchoControl> control,
                                 int slot, uint64_t seed);
StagePtr<Batch> MakePlacedEcho(StagePtr<Batch> input, std::shared_ptr<EchoControl> control,
                               uint64_t seed);

// What the planner sets.
enum class PlannerMode {
  // EchoPlacement::kAuto: the three placed echoes' factors.
  kPlacement,
  // EchoPlacement::kAdaptive: the adaptive echo before augmentation repeats
  // up to the factor where its copies stop raising the step rate
  // (EchoControl::before_cap: max_factor while copies are cheap), and when
  // the plan puts copies past the augmentation, the batch echo's factor.
  kAdaptive,
};

// A planner's start from an earlier one's decision
// (AutoPlacementOptions::start_from): sets on `control` what a planner in
// `mode` sets for that placement and factor (kPlacement: the placed echoes'
// factors; kAdaptive: the cap before augmentation and the batch echo's
// factor) and returns the planner's placement, factor, cap and its note.
// (src/internal/factor_log.cc)
struct StartedPlan {
  int placement = kPlacedBefore;
  double factor = 1;
  double before_cap = 1e9;
  std::string note;
};
StartedPlan StartFromMemory(const EchoPlannerMemory& memory, PlannerMode mode,
                            EchoControl& control);

// The planner at the top (see the file comment). `above_boundary`: the name
// of the stage right above the upstream's boundary Prefetch (whose
// producer_blocked_s gives the upstream's running time). Its stats row: "placement"
// (EchoPlacement's value), "factor", "decisions", the costs ("cost_*"), the
// consumer's "step_ms", "cores", the echo diagnostics of the batches it hands
// out ("dup_rows_per_batch", "fresh_row_fraction", "copy_distance_steps");
// "decode_workers" (kAuto with a decode Map's control: its workers); its
// notes are the decisions with their reasons.
StagePtr<Batch> MakeEchoPlanner(StagePtr<Batch> input, std::shared_ptr<EchoControl> control,
                                AutoPlacementOptions options, PlannerMode mode,
                                std::string above_boundary);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_AUTO_PLACEMENT_H_
