// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The planner of auto placement and of regime-aware adaptive echo
// (internal/auto_placement.h): the stage that reads the pipeline every
// `decide_every` batches, plans and sets the factors. What a window cost is
// measured in internal/window_costs.cc.
#include "internal/auto_placement.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/internal/counter.h"
#include "dataecho/loss_feedback.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "internal/copy_value_learner.h"
#include "internal/decode_workers.h"
#include "internal/echo_diagnostics.h"
#include "internal/window_costs.h"

namespace dataecho::internal {
namespace {

class EchoPlannerStage final : public UnaryStage<Batch, Batch> {
 public:
  EchoPlannerStage(StagePtr<Batch> input, std::shared_ptr<EchoControl> control,
                   AutoPlacementOptions options, PlannerMode mode, std::string above_boundary)
      : UnaryStage<Batch, Batch>(std::move(input)),
        control_(std::move(control)),
        options_(std::move(options)),
        mode_(mode),
        above_boundary_(std::move(above_boundary)),
        cores_(options_.pipeline_cores > 0 ? options_.pipeline_cores
                                           : std::max(1, AvailableCpus() - options_.trainer_cores)),
        learner_(options_) {
    if (control_->decode != nullptr && mode_ == PlannerMode::kPlacement)
      decode_.emplace(control_->decode);
    if (options_.start_from.has_value()) StartFrom(*options_.start_from);
  }

  absl::StatusOr<std::optional<Batch>> Next() override {
    const int64_t ask = NowNanos();
    if (last_return_ > 0 && window_steps_.size() < kMaxWindowSteps)
      window_steps_.push_back(ask - last_return_);
    absl::StatusOr<std::optional<Batch>> r = this->input().Next();
    const int64_t got = NowNanos();
    in_next_ns_.Add(got - ask);
    last_return_ = got;
    if (r.ok() && r->has_value()) {
      ++batches_;
      batches_out_.Add(1);
      rows_ = (*r)->num_rows;
      fresh_rows_ += (*r)->fresh_rows;
      batch_bytes_ = static_cast<int64_t>((*r)->ByteSize());
      if ((*r)->fresh() && (*r)->fresh_rows > 0) {  // the example-level factor, smoothed
        realized_ = 0.875 * realized_ + 0.125 * static_cast<double>((*r)->num_rows) /
                                            static_cast<double>((*r)->fresh_rows);
        control_->realized_before.store(realized_, std::memory_order_relaxed);
      }
      diagnostics_.Add(**r);
      window_rows_ += rows_;
      if (++window_batches_ >= options_.decide_every || LargeBatchesFillTheWindow()) {
        window_batches_ = window_rows_ = 0;
        Decide(got);
      }
    }
    return r;
  }

  // Epochs: the chain below starts over (a Repeat above, or a pipeline
  // built afresh and started at epoch k), and the planner keeps what it
  // measured and decided: costs, placement, factor and the placed echoes'
  // factors carry into the new epoch, which starts echoing as the last one
  // ended instead of measuring again. The pause between the last pull of an
  // epoch and the first of the next is not a step.
  absl::Status EnableRestart() override { return this->input().EnableRestart(); }
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(this->input().Restart(epoch));
    last_return_ = 0;
    return absl::OkStatus();
  }

  // Checkpoints. The planner's section comes *before* its input's: it holds
  // the decisions (the placed echoes' logs of factor changes, up to their
  // positions now; kAdaptive: the adaptive echo's journal of fresh/repeat
  // decisions), which the stages below need while they restore (the
  // Prefetch between makes its in-flight batches again with them). Its
  // timing (costs, windows) is not state: a restored planner measures and
  // decides afresh.
  absl::Status SaveState(StateWriter& w) override {
    w.BeginStage(StateName(), StateOptionsHash());
    SaveDecisions(w);
    if (control_->journal != nullptr) control_->journal->Save(w);
    return this->input().SaveState(w);
  }
  absl::Status RestoreState(StateReader& r) override {
    if (absl::Status s = r.BeginStage(StateName()); !s.ok()) return s;
    if (absl::Status s = RestoreDecisions(r); !s.ok()) return s;
    if (control_->journal != nullptr) {
      if (absl::Status s = control_->journal->Restore(r, options_.name); !s.ok()) return s;
    }
    return this->input().RestoreState(r);
  }
  // The trainer's losses (Pipeline<Batch>::ReportLoss) come here.
  std::shared_ptr<LossFeedback> loss_feedback() const override { return feedback_; }

  absl::Status SaveRefs(std::span<const Batch* const> items, StateWriter& w) override {
    return this->input().SaveRefs(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<Batch>* out) override {
    return this->input().Reread(r, n, out);
  }

 protected:
  std::string StateName() const override { return options_.name; }
  uint64_t StateOptionsHash() const override {
    return OptionsHash().Add(static_cast<int64_t>(mode_)).Add(options_.seed).value();
  }

  StageStats OwnStats() const override {
    StageStats s;
    s.name = options_.name;
    s.elements = batches_out_.Get();
    s.input_wait = absl::Nanoseconds(in_next_ns_.Get());
    absl::MutexLock lock(&mu_);
    s.extra = {{"placement", static_cast<double>(placement_)},
               {"factor", factor_},
               {"decisions", static_cast<double>(notes_.size())},
               {"cores", static_cast<double>(cores_)},
               {"cost_upstream_cpu_ms", costs_.upstream_cpu * 1e3},
               {"cost_augment_cpu_ms", costs_.augment_cpu * 1e3},
               {"cost_row_cpu_ms", costs_.row_cpu * 1e3},
               {"upstream_ms_per_item", costs_.upstream_time * 1e3},
               {"step_ms", costs_.step * 1e3},
               {"predicted_steps_per_sec", predicted_}};
    if (decode_.has_value()) s.extra.emplace_back("decode_workers", decode_->workers());
    // Loss feedback: the batches reported and the values of a copy learned.
    s.extra.emplace_back("loss_reports", static_cast<double>(feedback_->reports()));
    for (const auto& [p, name] : {std::pair{kPlacedBefore, "copy_value_before"},
                                  std::pair{kPlacedAfter, "copy_value_after"},
                                  std::pair{kPlacedBatch, "copy_value_batch"}}) {
      if (learner_.value(p).has_value()) s.extra.emplace_back(name, *learner_.value(p));
    }
    diagnostics_.AppendTo(&s.extra);
    s.notes = notes_;
    return s;
  }

 private:
  // An earlier planner's costs and decision (AutoPlacementOptions::start_from):
  // echo as it did from the first batch; later windows refine the costs.
  void StartFrom(const EchoPlannerMemory& m) {
    StartedPlan p = StartFromMemory(m, mode_, *control_);
    absl::MutexLock lock(&mu_);
    costs_ = m.costs;
    costs_.cores = cores_;
    measured_ = true;
    placement_ = p.placement;
    if (placement_ != kPlacedBatch) example_placement_ = placement_;
    factor_ = p.factor;
    before_cap_ = p.before_cap;
    notes_.push_back(std::move(p.note));
  }

  // The placed echoes' positions and factor changes (SaveFactorLogs), then
  // the planner's placement and factor.
  void SaveDecisions(StateWriter& w) {
    SaveFactorLogs(*control_, w);
    absl::MutexLock lock(&mu_);
    w.U64(static_cast<uint64_t>(placement_));
    w.Double(factor_);
  }
  absl::Status RestoreDecisions(StateReader& r) {
    DATAECHO_RETURN_IF_ERROR(RestoreFactorLogs(*control_, options_.name, r));
    const uint64_t placement = r.U64();
    const double factor = r.Double();
    if (!r.status().ok()) return r.status();
    if (placement > kPlacedBatch || !(factor >= 1 && factor <= kMaxEchoFactor)) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", options_.name, ": placement ",
                                              placement, " at factor ", factor));
    }
    absl::MutexLock lock(&mu_);
    placement_ = static_cast<int>(placement);
    factor_ = factor;
    return absl::OkStatus();
  }

  // The costs of the window since the last reading (smoothed), a plan, and
  // a switch if the plan differs.
  void Decide(int64_t now) {
    std::vector<StageStats> rows;
    this->input().AppendStats(&rows);
    const WindowReading cur =
        TakeWindowReading(now, *control_, fresh_rows_, batches_, rows, above_boundary_);
    // The first window starts after `decide_every` batches; the first one
    // measured is the pipeline's warm-up (queues and buffers settling): not
    // planned on, so no placement is chosen from it.
    if (!last_.has_value() || windows_ == 0) {
      if (last_.has_value()) ++windows_;
      last_ = cur;
      window_steps_.clear();
      return;
    }
    const WindowReading& a = *last_;
    const double wall = static_cast<double>(cur.wall_ns - a.wall_ns) * 1e-9;
    const double batches = static_cast<double>(cur.batches - a.batches);
    if (!(wall > 0) || !(batches > 0)) {
      last_ = cur;
      window_steps_.clear();
      return;
    }
    if (!WindowHasEnoughSamples(cur, a)) return;  // the window goes on until it has them
    const WindowCosts m = MeasureWindowCosts(
        a, cur, *control_, cores_, MedianStepSeconds(&window_steps_), rows_, batch_bytes_);
    last_ = cur;
    window_steps_.clear();
    ++windows_;

    absl::MutexLock lock(&mu_);
    if (measured_) {
      SmoothWindowCosts(m, &costs_);
    } else {
      costs_ = m.costs;
      measured_ = true;
    }
    // What the trainer's losses say copies are worth (none reported: the
    // fitted gains).
    const std::optional<std::string> learned =
        learner_.Learn(feedback_->TakeWindow(), example_placement_, placement_, factor_);
    const EchoPlan plan = PlanEcho(costs_, learner_.Apply(options_));
    const std::string from_loss = learned.has_value() ? fmt::format(" [{}]", *learned) : "";
    predicted_ = plan.steps_per_sec;
    const bool first = notes_.empty();
    DecideDecode(now, m.cpu_per_fresh, m.upstream_bound, plan.placement);
    if (mode_ == PlannerMode::kAdaptive) {
      DecideAdaptive(plan, first, from_loss);
      return;
    }
    const bool moved = plan.placement != placement_ ||
                       std::fabs(plan.factor - factor_) > 0.1 * std::max(factor_, 1.0);
    if (!first && !moved) {
      pending_ = -1;
      return;
    }
    // Another placement only when two plans in a row say so: one window's
    // measurement (a stall, a burst) does not move the copies.
    if (!first && plan.placement != placement_ && pending_ != plan.placement) {
      pending_ = plan.placement;
      return;
    }
    pending_ = -1;
    for (int slot : {kPlacedBefore, kPlacedAfter, kPlacedBatch}) {
      control_->factor[slot].store(slot == plan.placement ? plan.factor : 1.0,
                                   std::memory_order_relaxed);
    }
    placement_ = plan.placement;
    if (placement_ != kPlacedBatch) example_placement_ = placement_;
    factor_ = plan.factor;
    notes_.push_back(fmt::format("after {} batches: {}{}", batches_, plan.reason, from_loss));
  }

  // A window of large batches ends at decide_every_rows (echo_planner.h),
  // with at least kMinWindowBatches batches.
  static constexpr int64_t kMinWindowBatches = 4;
  bool LargeBatchesFillTheWindow() const {
    return options_.decide_every_rows > 0 && window_rows_ >= options_.decide_every_rows &&
           window_batches_ >= std::min<int64_t>(options_.decide_every, kMinWindowBatches);
  }
  // Steps kept per window (a window that waits for samples keeps the first).
  static constexpr size_t kMaxWindowSteps = 1 << 16;

  // The decode Map's workers (internal/decode_workers.h): a note when raised.
  void DecideDecode(int64_t now, double cpu_per_fresh, bool upstream_bound, int placement)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!decode_.has_value()) return;
    const int64_t held = placement == kPlacedBefore  ? costs_.item_bytes
                         : placement == kPlacedAfter ? costs_.augmented_bytes
                                                     : costs_.batch_bytes;
    std::optional<std::string> note =
        decode_->Decide(now, {.cores = cores_,
                              .cpu_per_fresh = cpu_per_fresh,
                              .upstream_bound = upstream_bound,
                              .ram_left = options_.ram_budget_bytes - held});
    if (note.has_value()) notes_.push_back(fmt::format("after {} batches: {}", batches_, *note));
  }

  // Adaptive echo that knows the regime: while copies before augmentation
  // are cheap (the plan echoes there) it repeats as always, up to max_factor.
  // When they are not (copies augmented on the cores that make the fresh
  // items slow the fresh items), it stops repeating there and the copies go
  // past the augmentation, as whole batches at the plan's factor (at most
  // max_factor): so no item is emitted more than max_factor times, except
  // around a switch, where an item repeated before it may also be in a
  // repeated batch.
  void DecideAdaptive(const EchoPlan& plan, bool first, const std::string& from_loss)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool cheap = plan.placement == kPlacedBefore || plan.factor <= 1;
    const double cap = cheap ? 1e9 : 1.0;  // cheap: no cap of ours (the budgets bound it)
    const double batch_factor = cheap ? 1.0 : std::min(plan.factor, options_.max_factor);
    const bool moved =
        cap != before_cap_ || std::fabs(batch_factor - factor_) > 0.1 * std::max(factor_, 1.0);
    if (!first && !moved) return;
    before_cap_ = cap;
    control_->before_cap.store(cap, std::memory_order_relaxed);
    control_->factor[kPlacedBatch].store(batch_factor, std::memory_order_relaxed);
    placement_ = cheap ? kPlacedBefore : kPlacedBatch;
    factor_ = batch_factor;
    notes_.push_back(
        cheap ? fmt::format("after {} batches: adaptive echo before augmentation (at most {:g} "
                            "emissions per item): {}{}",
                            batches_, options_.max_factor, plan.reason, from_loss)
              : fmt::format("after {} batches: no adaptive repeats before augmentation (a copy "
                            "there slows the fresh items), batch echo e = {:.2f} instead: {}{}",
                            batches_, batch_factor, plan.reason, from_loss));
  }

  const std::shared_ptr<EchoControl> control_;
  const AutoPlacementOptions options_;
  const PlannerMode mode_;
  const std::string above_boundary_;
  const int cores_;
  // Consumer thread only.
  int64_t last_return_ = 0, batches_ = 0, rows_ = 0, batch_bytes_ = 0;
  int64_t window_batches_ = 0, window_rows_ = 0;  // since the last Decide()
  int64_t fresh_rows_ = 0;
  double realized_ = 1;
  std::optional<WindowReading> last_;
  int64_t windows_ = 0;                // windows measured, the warm-up included
  std::vector<int64_t> window_steps_;  // the consumer's times between pulls, this window
  Counter in_next_ns_, batches_out_;
  EchoDiagnostics diagnostics_;
  mutable absl::Mutex mu_;
  EchoCosts costs_ ABSL_GUARDED_BY(mu_);
  bool measured_ ABSL_GUARDED_BY(mu_) = false;
  int placement_ ABSL_GUARDED_BY(mu_) = kPlacedBefore;
  double factor_ ABSL_GUARDED_BY(mu_) = 1;
  double predicted_ ABSL_GUARDED_BY(mu_) = 0;
  double before_cap_ ABSL_GUARDED_BY(mu_) = 1e9;
  int pending_ ABSL_GUARDED_BY(mu_) = -1;  // a new placement planned once (kPlacement)
  std::vector<std::string> notes_ ABSL_GUARDED_BY(mu_);
  std::optional<DecodeWorkersPlanner> decode_ ABSL_GUARDED_BY(mu_);
  // Loss feedback: the trainer's reports, and what they taught; the
  // example-level placement the rows' copies come from.
  const std::shared_ptr<LossFeedback> feedback_ = std::make_shared<LossFeedback>();
  CopyValueLearner learner_ ABSL_GUARDED_BY(mu_);
  int example_placement_ ABSL_GUARDED_BY(mu_) = kPlacedBefore;
};

}  // namespace

StagePtr<Batch> MakeEchoPlanner(StagePtr<Batch> input, std::shared_ptr<EchoControl> control,
                                AutoPlacementOptions options, PlannerMode mode,
                                std::string above_boundary) {
  return std::make_unique<EchoPlannerStage>(std::move(input), std::move(control),
                                            std::move(options), mode, std::move(above_boundary));
}

}  // namespace dataecho::internal
