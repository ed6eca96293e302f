// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/loss_feedback.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

#include "fmt/format.h"

namespace dataecho {

void LossSums::Add(double x, double y, double weight) {
  w += weight;
  wx += weight * x;
  wy += weight * y;
  wxx += weight * x * x;
  wxy += weight * x * y;
}

void LossSums::Add(const LossSums& o) {
  w += o.w;
  wx += o.wx;
  wy += o.wy;
  wxx += o.wxx;
  wxy += o.wxy;
  reports += o.reports;
}

std::optional<LossSums::Split> LossSums::FreshAndCopy(double min_rows) const {
  if (!(w >= min_rows) || w <= 0) return std::nullopt;
  const double mx = wx / w, my = wy / w;
  const double var = wxx / w - mx * mx;
  // Fractions that hardly differ (mixed batches reported as means, all with
  // about the same share of fresh rows) cannot tell the two losses apart.
  if (!(var >= 0.01)) return std::nullopt;
  const double slope = (wxy / w - mx * my) / var;
  const double copy = my - slope * mx;
  return Split{.fresh_loss = copy + slope, .copy_loss = copy, .rows = w};
}

template <typename F>
absl::Status LossFeedback::ReportRows(const Batch& batch, std::span<const F> row_losses) {
  if (static_cast<int64_t>(row_losses.size()) != batch.num_rows) {
    return absl::InvalidArgumentError(fmt::format(
        "ReportLoss: {} row losses for a batch of {} rows", row_losses.size(), batch.num_rows));
  }
  const bool batch_copy = batch.repeat_index > 0;
  const bool indexed = batch.repeat_indices.num_elements() == batch.num_rows &&
                       batch.repeat_indices.dtype() == DType::kInt32;
  double fresh = 0, copies = 0;
  int64_t fresh_rows = 0;
  for (int64_t i = 0; i < batch.num_rows; ++i) {
    const double loss = static_cast<double>(row_losses[static_cast<size_t>(i)]);
    if (!std::isfinite(loss) || loss < 0) {
      return absl::InvalidArgumentError(
          fmt::format("ReportLoss: row {}'s loss is {}, not a finite number >= 0", i, loss));
    }
    const bool copy = batch_copy || (indexed && batch.repeat_indices.data<int32_t>()[i] > 0);
    (copy ? copies : fresh) += loss;
    if (!copy) ++fresh_rows;
  }
  const int64_t copy_rows = batch.num_rows - fresh_rows;
  absl::MutexLock lock(&mu_);
  ++reports_;
  LossSums& kind = batch_copy ? window_.batch_copies : window_.example_copies;
  ++kind.reports;
  if (copy_rows > 0) {
    kind.Add(0, copies / static_cast<double>(copy_rows), static_cast<double>(copy_rows));
  }
  if (fresh_rows > 0) {
    const double mean = fresh / static_cast<double>(fresh_rows);
    window_.example_copies.Add(1, mean, static_cast<double>(fresh_rows));
    window_.batch_copies.Add(1, mean, static_cast<double>(fresh_rows));
  }
  return absl::OkStatus();
}

absl::Status LossFeedback::Report(const Batch& batch, std::span<const float> row_losses) {
  return ReportRows(batch, row_losses);
}

absl::Status LossFeedback::Report(const Batch& batch, std::span<const double> row_losses) {
  return ReportRows(batch, row_losses);
}

absl::Status LossFeedback::Report(const Batch& batch, double mean_loss) {
  if (!std::isfinite(mean_loss) || mean_loss < 0 || batch.num_rows <= 0) {
    return absl::InvalidArgumentError(
        fmt::format("ReportLoss: a mean loss of {} over {} rows (wanted a finite number >= 0 "
                    "over a batch with rows)",
                    mean_loss, batch.num_rows));
  }
  const bool batch_copy = batch.repeat_index > 0;
  const double rows = static_cast<double>(batch.num_rows);
  const double x = batch_copy ? 0.0 : static_cast<double>(batch.fresh_rows) / rows;
  absl::MutexLock lock(&mu_);
  ++reports_;
  if (batch_copy) {
    window_.batch_copies.Add(0, mean_loss, rows);
    ++window_.batch_copies.reports;
    return absl::OkStatus();
  }
  window_.example_copies.Add(x, mean_loss, rows);
  ++window_.example_copies.reports;
  if (x >= 1) {  // an all-fresh batch: the fresh side of batch echo's copies too
    window_.batch_copies.Add(1, mean_loss, rows);
  }
  return absl::OkStatus();
}

LossWindow LossFeedback::TakeWindow() {
  absl::MutexLock lock(&mu_);
  LossWindow w = window_;
  window_ = LossWindow{};
  return w;
}

int64_t LossFeedback::reports() const {
  absl::MutexLock lock(&mu_);
  return reports_;
}

}  // namespace dataecho
