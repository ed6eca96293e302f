// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The value of a copy, learned from a trainer's losses (loss_feedback.h,
// Pipeline<Batch>::ReportLoss) for the echo planner
// (internal/auto_placement.h): each window's reports give the loss of a copy
// and of a fresh row; a copy is worth v = 1 - loss_gap_scale x (1 - L_c /
// L_f), in [0, 1] (AutoPlacementOptions::loss_gap_scale). Per placement, the
// value starts from what the fitted gains say a copy is worth at the factor
// in use, (G_p(e) - 1) / (e - 1), and each window moves it half way to what
// the window read. The plan then weighs that placement's steps by
// G(e) = 1 + (e - 1) v, and a placement that repeats more of an example
// (after_augment below before_augment, batch below both) by no more than
// that, as long as its own copies have not been read.
//
// Thread safety: none (the planner's, under its lock).
#ifndef DATAECHO_SRC_INTERNAL_COPY_VALUE_LEARNER_H_
#define DATAECHO_SRC_INTERNAL_COPY_VALUE_LEARNER_H_

#include <optional>
#include <string>

#include "dataecho/echo_planner.h"
#include "dataecho/loss_feedback.h"

namespace dataecho::internal {

class CopyValueLearner {
 public:
  explicit CopyValueLearner(const AutoPlacementOptions& options) : options_(options) {}

  // Folds in one window's reports. Copies made before the batch (a row's
  // repeat index) belong to `example_placement` (0 before_augment, 1
  // after_augment: the example-level placement in use), whole-batch copies
  // to batch echo, each read at `factor` (the factor of the placement in
  // use, for the starting value). Returns a note on what it read, if it read
  // anything.
  std::optional<std::string> Learn(const LossWindow& window, int example_placement, int placement,
                                   double factor);

  // The learned value of a copy at `placement`, if any.
  std::optional<double> value(int placement) const { return value_[placement]; }

  // `options` with the learned values in place of the fitted gains (see the
  // file comment).
  AutoPlacementOptions Apply(const AutoPlacementOptions& options) const;

 private:
  std::optional<std::string> LearnAt(int placement, const LossSums& sums, double factor);

  const AutoPlacementOptions options_;
  std::optional<double> value_[3];
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_COPY_VALUE_LEARNER_H_
