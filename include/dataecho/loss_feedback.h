// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// loss_feedback.h: a trainer's losses, for the echo planner to learn what a
// copy is worth on its model.
//
// The planner of EchoPlacement::kAuto (echo_planner.h) weighs a step by what
// its copies teach, G_p(e), which it takes from a table fitted on one model
// (AutoPlacementOptions::copy_gains_*). A trainer that reports each batch's
// loss lets it measure that on the model being trained: every batch says
// which of its rows are copies (Batch::repeat_indices, Batch::repeat_index),
// so the loss of the copies can be set against the loss of the fresh rows
// the same model saw in the same window of steps. A fresh row is one the
// model has not trained on; a copy is one it has. A copy whose loss is as
// high as a fresh row's still teaches as much as a fresh one; one whose loss
// fell towards 0 (memorized) teaches nothing. See echo_planner.h for how the
// planner turns these into a value per copy.
//
// Report the loss of the batch's forward pass, before the update it leads
// to, per row (best: the copies and fresh rows of a batch are then told
// apart) or as the batch's mean (a batch that is all fresh or all copies,
// as under batch echo, tells them apart; a mixed one is read by regression
// over the window: the mean loss against the fraction of fresh rows):
//
//   for (dataecho::Batch& batch : pipeline) {
//     std::vector<float> losses = ForwardPerRow(batch);   // before the update
//     (void)pipeline.ReportLoss(batch, losses);           // or (batch, mean loss)
//     Update(...);
//   }
//
// Pipeline<Batch>::ReportLoss (builder.h) passes the report to the
// pipeline's LossFeedback (ReportLoss() below): the planner's, if the
// pipeline has one. With no report at all the planner keeps the fitted table.
// A trainer that reports from another thread may keep the feedback itself:
//
//   std::shared_ptr<dataecho::LossFeedback> feedback = pipeline.loss_feedback();
//   absl::Status s = dataecho::ReportLoss(feedback.get(), batch, losses);
//
// Thread safety: LossFeedback is thread-safe (a trainer may report from
// another thread than the one that pulls the batches).
#ifndef DATAECHO_LOSS_FEEDBACK_H_
#define DATAECHO_LOSS_FEEDBACK_H_

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/example.h"
#include "dataecho/export.h"

namespace dataecho {

// The losses reported over a window of steps, as weighted sums of points
// (x, y): x the fraction of fresh rows a loss was measured on, y the loss,
// the weight its rows. Per-row reports give two points a batch (the fresh
// rows at x = 1, the copies at x = 0); a mean over a batch one.
struct DATAECHO_EXPORT LossSums {
  double w = 0, wx = 0, wy = 0, wxx = 0, wxy = 0;
  int64_t reports = 0;

  void Add(double x, double y, double weight);
  void Add(const LossSums& other);
  // The loss of a fresh row and of a copy this window (the regression's
  // values at x = 1 and x = 0), if it has at least `min_rows` rows and its
  // fresh fractions spread enough to tell them apart.
  struct Split {
    double fresh_loss = 0, copy_loss = 0, rows = 0;
  };
  std::optional<Split> FreshAndCopy(double min_rows) const;
};

// What a window's reports say, by the kind of copy: copies made before the
// batch was built (example echo: a row's repeat index > 0) and whole-batch
// copies (batch echo: the batch's repeat index > 0). Fresh rows count in both.
struct DATAECHO_EXPORT LossWindow {
  LossSums example_copies;
  LossSums batch_copies;
};

class DATAECHO_EXPORT LossFeedback {
 public:
  // The loss of each row of `batch` (row_losses[i]: row i). INVALID_ARGUMENT
  // if there are not batch.num_rows of them or one is negative or not finite.
  absl::Status Report(const Batch& batch, std::span<const float> row_losses);
  absl::Status Report(const Batch& batch, std::span<const double> row_losses);
  // The mean loss of `batch`'s rows. INVALID_ARGUMENT if it is negative or
  // not finite, or the batch has no rows.
  absl::Status Report(const Batch& batch, double mean_loss);

  // The reports since the last call (the planner's window), and starts anew.
  LossWindow TakeWindow();
  // Batches reported, all told.
  int64_t reports() const;

 private:
  template <typename F>
  absl::Status ReportRows(const Batch& batch, std::span<const F> row_losses);

  mutable absl::Mutex mu_;
  LossWindow window_ ABSL_GUARDED_BY(mu_);
  int64_t reports_ ABSL_GUARDED_BY(mu_) = 0;
};

// The losses of a batch's rows as ReportLoss() takes them: what views as a
// span of float or double (a std::vector, a std::span, an array).
template <typename L>
concept RowLosses = std::convertible_to<const L&, std::span<const float>> ||
    std::convertible_to<const L&, std::span<const double>>;

// Reports the loss of `batch` to `feedback`: its rows' losses (RowLosses) or
// their mean (a number), as LossFeedback::Report. FAILED_PRECONDITION if
// `feedback` is null: the pipeline it came from (Pipeline::loss_feedback())
// has no echo planner. What Pipeline<Batch>::ReportLoss does.
template <typename L>
requires RowLosses<L> || std::convertible_to<const L&, double> absl::Status ReportLoss(
    LossFeedback* feedback, const Batch& batch, const L& loss) {
  if (feedback == nullptr) {
    return absl::FailedPreconditionError(
        "ReportLoss: this pipeline has no echo planner to learn from the loss (EchoedBatches "
        "with placement auto or adaptive has one)");
  }
  return feedback->Report(batch, loss);
}

}  // namespace dataecho

#endif  // DATAECHO_LOSS_FEEDBACK_H_
