// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Loss feedback (loss_feedback.h, Pipeline<Batch>::ReportLoss): what a
// window of reports says of the loss of copies and of fresh rows, what the
// planner learns from it (internal/copy_value_learner.h), and the plans it
// makes then.
#include "dataecho/loss_feedback.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "dataecho/echo_placement.h"
#include "dataecho/echo_planner.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "internal/copy_value_learner.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using internal::CopyValueLearner;

constexpr int kBefore = static_cast<int>(EchoPlacement::kBeforeAugment);
constexpr int kAfter = static_cast<int>(EchoPlacement::kAfterAugment);
constexpr int kBatchEcho = static_cast<int>(EchoPlacement::kBatch);

// A batch of rows with these example-level repeat indices.
Batch WithRepeats(const std::vector<int32_t>& repeats, uint32_t batch_repeat = 0) {
  Batch b;
  b.num_rows = static_cast<int64_t>(repeats.size());
  b.repeat_indices = *Tensor::Make(DType::kInt32, {b.num_rows},
                                   Buffer::CopyOf(repeats.data(), repeats.size() * 4));
  b.repeat_index = batch_repeat;
  for (int32_t r : repeats) b.fresh_rows += batch_repeat == 0 && r == 0 ? 1 : 0;
  return b;
}

TEST(LossFeedbackTest, RowLossesSplitCopiesFromFreshRows) {
  LossFeedback f;
  ASSERT_TRUE(
      f.Report(WithRepeats({0, 1, 0, 2}), std::vector<float>{1.0F, 0.25F, 0.5F, 0.75F}).ok());
  const LossWindow w = f.TakeWindow();
  const std::optional<LossSums::Split> s = w.example_copies.FreshAndCopy(4);
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(s->fresh_loss, 0.75, 1e-9);
  EXPECT_NEAR(s->copy_loss, 0.5, 1e-9);
  EXPECT_EQ(s->rows, 4);
  EXPECT_FALSE(w.batch_copies.FreshAndCopy(1).has_value());    // no batch copies
  EXPECT_FALSE(w.example_copies.FreshAndCopy(5).has_value());  // fewer rows than asked
  EXPECT_EQ(f.reports(), 1);
  EXPECT_EQ(f.TakeWindow().example_copies.w, 0);  // a new window
}

TEST(LossFeedbackTest, MeanLossesAreReadByRegressionOnTheFreshFraction) {
  // Fresh rows at loss 1, copies at 0.5: a batch's mean is 0.5 + 0.5 x.
  LossFeedback f;
  for (const std::vector<int32_t>& rows :
       {std::vector<int32_t>{0, 0, 0, 0}, {0, 1, 0, 1}, {0, 1, 2, 3}}) {
    double sum = 0;
    for (int32_t r : rows) sum += r == 0 ? 1.0 : 0.5;
    ASSERT_TRUE(f.Report(WithRepeats(rows), sum / 4).ok());
  }
  // Batch echo: a whole copy of a batch, reported as its mean.
  ASSERT_TRUE(f.Report(WithRepeats({0, 0, 0, 0}, /*batch_repeat=*/1), 0.25).ok());
  const LossWindow w = f.TakeWindow();
  const std::optional<LossSums::Split> ex = w.example_copies.FreshAndCopy(1);
  ASSERT_TRUE(ex.has_value());
  EXPECT_NEAR(ex->fresh_loss, 1.0, 1e-9);
  EXPECT_NEAR(ex->copy_loss, 0.5, 1e-9);
  const std::optional<LossSums::Split> batch = w.batch_copies.FreshAndCopy(1);
  ASSERT_TRUE(batch.has_value());
  EXPECT_NEAR(batch->fresh_loss, 1.0, 1e-9);  // the all-fresh batch
  EXPECT_NEAR(batch->copy_loss, 0.25, 1e-9);

  // Batches that all hold about the same share of fresh rows cannot tell.
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(f.Report(WithRepeats({0, 1, 0, 1}), 0.7).ok());
  EXPECT_FALSE(f.TakeWindow().example_copies.FreshAndCopy(1).has_value());
}

TEST(LossFeedbackTest, LossesThatDoNotFitTheBatchAreRefused) {
  LossFeedback f;
  const Batch b = WithRepeats({0, 1});
  EXPECT_EQ(f.Report(b, std::vector<float>{1.0F}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.Report(b, std::vector<double>{1.0, std::nan("")}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.Report(b, std::vector<float>{1.0F, -1.0F}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.Report(b, -0.5).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.Report(Batch{}, 0.5).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.reports(), 0);
}

// --- What the planner learns, and the plans it then makes ---

// Fashion-MNIST over throttled HTTP on one core, batches of 128, a 2.5 ms
// step, R = 4; augmentation `augment_cpu` seconds per item.
EchoCosts OverHttp(double augment_cpu) {
  return {.upstream_cpu = 8e-6,
          .augment_cpu = augment_cpu,
          .row_cpu = 7e-6,
          .upstream_time = 4 * 2.5e-3 / 128,
          .step = 2.5e-3,
          .batch_rows = 128,
          .cores = 1};
}

// A window in which fresh rows had loss `fresh` and the copies made at an
// example-level placement (or, `batch`, whole-batch copies) `copy`.
LossWindow Window(double fresh, double copy, bool batch = false) {
  LossWindow w;
  LossSums& sums = batch ? w.batch_copies : w.example_copies;
  sums.Add(1, fresh, 512);
  sums.Add(0, copy, 1024);
  return w;
}

// The plan after `windows` windows of `w` read at the plan in use.
EchoPlan PlanAfter(const EchoCosts& costs, const AutoPlacementOptions& o, const LossWindow& w,
                   int windows) {
  CopyValueLearner learner(o);
  EchoPlan plan = PlanEcho(costs, o);
  for (int i = 0; i < windows; ++i) {
    const int example = plan.placement == kBatchEcho ? kBefore : plan.placement;
    EXPECT_TRUE(learner.Learn(w, example, plan.placement, plan.factor).has_value());
    plan = PlanEcho(costs, learner.Apply(o));
  }
  return plan;
}

TEST(CopyValueLearnerTest, CopiesThatTeachNothingLowerTheFactorToOne) {
  const AutoPlacementOptions o{.max_factor = 8};
  const EchoPlan before = PlanEcho(OverHttp(2e-6), o);
  ASSERT_EQ(before.placement, kBefore) << before.reason;
  ASSERT_GT(before.factor, 2) << before.reason;
  // The copies' loss is 0: memorized. Their value halves every window, and
  // after_augment and batch echo are worth no more than before_augment.
  const EchoPlan plan = PlanAfter(OverHttp(2e-6), o, Window(1.0, 0.0), 10);
  EXPECT_EQ(plan.factor, 1) << plan.reason;
  // A copy whose loss is above a fresh row's is worth a fresh one, no more.
  CopyValueLearner learner(o);
  ASSERT_TRUE(learner.Learn(Window(1.0, 2.0), kBefore, kBefore, 4).has_value());
  EXPECT_LE(*learner.value(kBefore), 1.0);
}

TEST(CopyValueLearnerTest, CopiesThatTeachAsMuchAsFreshLetTheFactorRise) {
  // Augmentation costs 0.104 ms an item: the fitted gains keep after_augment
  // at about e = 2 (its copies are the same augmented item again).
  const AutoPlacementOptions o{.max_factor = 8};
  const EchoPlan fitted = PlanEcho(OverHttp(0.104e-3), o);
  ASSERT_EQ(fitted.placement, kAfter) << fitted.reason;
  ASSERT_LT(fitted.factor, 3) << fitted.reason;
  // On this model the copies' loss is the fresh rows': they teach as much.
  const EchoPlan plan = PlanAfter(OverHttp(0.104e-3), o, Window(1.0, 1.0), 6);
  EXPECT_EQ(plan.placement, kAfter) << plan.reason;
  EXPECT_GE(plan.factor, 3.5) << plan.reason;  // R = 4: as high as the upstream needs
  EXPECT_GT(plan.progress_per_sec, fitted.progress_per_sec) << plan.reason;
}

TEST(CopyValueLearnerTest, OptionsAreValidated) {
  EXPECT_EQ(AutoPlacementOptions{.loss_gap_scale = 0}.Validate().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AutoPlacementOptions{.loss_gap_scale = std::nan("")}.Validate().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AutoPlacementOptions{.loss_min_rows = 0}.Validate().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(AutoPlacementOptions{}.Validate().ok());
}

TEST(CopyValueLearnerTest, WithoutReportsThePlanIsTheFittedOne) {
  const AutoPlacementOptions o{.max_factor = 8};
  CopyValueLearner learner(o);
  EXPECT_FALSE(learner.Learn(LossWindow{}, kBefore, kBefore, 3).has_value());
  // Fewer rows than loss_min_rows: not read either.
  LossWindow few;
  few.example_copies.Add(1, 1.0, 10);
  few.example_copies.Add(0, 0.0, 10);
  EXPECT_FALSE(learner.Learn(few, kBefore, kBefore, 3).has_value());
  for (double augment : {2e-6, 0.104e-3}) {
    const EchoPlan a = PlanEcho(OverHttp(augment), o);
    const EchoPlan b = PlanEcho(OverHttp(augment), learner.Apply(o));
    EXPECT_EQ(a.placement, b.placement);
    EXPECT_EQ(a.factor, b.factor);
  }
}

TEST(CopyValueLearnerTest, BatchCopiesThatTeachNothingLeaveBatchEcho) {
  // One core, augmentation 0.104 ms an item, a batch copy worth as much as a
  // fresh batch (copy_value_batch = 1): the plan echoes whole batches.
  AutoPlacementOptions o{.max_factor = 8, .copy_value_batch = 1.0};
  const EchoPlan fitted = PlanEcho(OverHttp(0.104e-3), o);
  ASSERT_EQ(fitted.placement, kBatchEcho) << fitted.reason;
  const EchoPlan plan = PlanAfter(OverHttp(0.104e-3), o, Window(1.0, 0.0, /*batch=*/true), 4);
  EXPECT_NE(plan.placement, kBatchEcho) << plan.reason;
}

// --- Through a pipeline ---

TEST(ReportLossTest, OnlyAPipelineWithAPlannerTakesLosses) {
  Pipeline<Batch> fixed = EchoedBatches(FromVector(testing::MakeExamples(16)), nullptr,
                                        {.placement = EchoPlacement::kBeforeAugment,
                                         .echo = {.factor = 2},
                                         .batch = {.batch_size = 4}});
  absl::StatusOr<std::optional<Batch>> b = fixed.Next();
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ(fixed.ReportLoss(**b, 0.5).code(), absl::StatusCode::kFailedPrecondition);
  // Row losses of either type, as a vector or a span, go the same way.
  const std::vector<float> rows_f(4, 0.5F);
  const std::vector<double> rows_d(4, 0.5);
  EXPECT_EQ(fixed.ReportLoss(**b, rows_f).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(fixed.ReportLoss(**b, std::span<const double>(rows_d)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(fixed.loss_feedback(), nullptr);
  EXPECT_EQ(ReportLoss(fixed.loss_feedback().get(), **b, rows_d).code(),
            absl::StatusCode::kFailedPrecondition);

  Pipeline<Batch> broken(absl::InvalidArgumentError("bad option"));
  EXPECT_EQ(broken.ReportLoss(**b, 0.5).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(broken.ReportLoss(**b, rows_f).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReportLossTest, TheFreeFunctionReportsRowsOrTheMean) {
  LossFeedback feedback;
  const Batch batch = WithRepeats({0, 0, 1, 2});
  const std::vector<double> rows(4, 1.0);
  const float rows_f[4] = {1.0F, 1.0F, 1.0F, 1.0F};
  EXPECT_TRUE(ReportLoss(&feedback, batch, rows).ok());
  EXPECT_TRUE(ReportLoss(&feedback, batch, rows_f).ok());
  EXPECT_TRUE(ReportLoss(&feedback, batch, 1.0F).ok());
  EXPECT_EQ(ReportLoss(&feedback, batch, std::vector<float>(3, 1.0F)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(feedback.reports(), 3);
}

TEST(ReportLossTest, ThePlannerLearnsFromTheTrainersLosses) {
  // An I/O-bound upstream (2 ms an item, batches of 8, a 4 ms step: R = 4);
  // the trainer reports copies at loss 0 (memorized), fresh rows at 1.
  Pipeline<Batch> p =
      EchoedBatches(FromVector(testing::MakeExamples(4000))
                        .Throttle({.latency = absl::Milliseconds(2), .name = "slow"})
                        .Prefetch({.depth = 32}),
                    nullptr,
                    {.placement = EchoPlacement::kAuto,
                     .shuffle = {.buffer_size = 32, .seed = 2},
                     .batch = {.batch_size = 8},
                     .prefetch = {.depth = 2},
                     .auto_placement = {.max_factor = 6, .decide_every = 4, .loss_min_rows = 16}});
  ASSERT_TRUE(p.status().ok()) << p.status();
  // Until the planner has decided from what it learned (a decision that moves
  // the placement waits for two windows that agree, and a window for enough
  // samples: on a loaded machine that takes more batches), at most 400.
  constexpr std::string_view kLearned = "copies before augmentation worth v = ";
  int64_t reported = 0, copies_seen = 0;
  for (int i = 0; i < 400; ++i) {
    absl::StatusOr<std::optional<Batch>> b = p.Next();
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
    std::vector<float> losses;
    const auto repeats = (*b)->repeat_indices.data<int32_t>();
    for (int64_t r = 0; r < (*b)->num_rows; ++r) {
      losses.push_back(repeats[r] > 0 ? 0.0F : 1.0F);
      copies_seen += repeats[r] > 0 ? 1 : 0;
    }
    ASSERT_TRUE(p.ReportLoss(**b, losses).ok());
    ++reported;
    absl::SleepFor(absl::Milliseconds(4));
    if (i >= 55 && i % 4 == 3 && FormatStatsTable(p.Stats()).find(kLearned) != std::string::npos) {
      break;
    }
  }
  const std::vector<StageStats> stats = p.Stats();
  const StageStats& planner = stats.back();
  const std::string table = FormatStatsTable(stats);
  EXPECT_EQ(planner.Extra("loss_reports"), static_cast<double>(reported)) << table;
  ASSERT_GT(copies_seen, 0) << table;  // it echoed: then it read the copies' losses
  EXPECT_LT(planner.Extra("copy_value_before", 1.0), 0.2) << table;
  EXPECT_NE(table.find(kLearned), std::string::npos) << table;
}

}  // namespace
}  // namespace dataecho
