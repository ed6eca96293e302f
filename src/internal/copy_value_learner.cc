// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "internal/copy_value_learner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "fmt/format.h"

namespace dataecho::internal {
namespace {

constexpr const char* kWhere[] = {"before augmentation", "after augmentation", "as whole batches"};

// Factors the capped gains are written out at (2, 3, ..., kCappedFactors + 1).
constexpr int kCappedFactors = 31;

std::optional<double>& CopyValueOf(AutoPlacementOptions& o, int placement) {
  return placement == 0   ? o.copy_value_before
         : placement == 1 ? o.copy_value_after
                          : o.copy_value_batch;
}

std::vector<double>& GainsOf(AutoPlacementOptions& o, int placement) {
  return placement == 0   ? o.copy_gains_before
         : placement == 1 ? o.copy_gains_after
                          : o.copy_gains_batch;
}

}  // namespace

std::optional<std::string> CopyValueLearner::Learn(const LossWindow& window, int example_placement,
                                                   int placement, double factor) {
  std::optional<std::string> a = LearnAt(example_placement, window.example_copies,
                                         placement == example_placement ? factor : 2);
  std::optional<std::string> b = LearnAt(2, window.batch_copies, placement == 2 ? factor : 2);
  if (a.has_value() && b.has_value()) return *a + "; " + *b;
  return a.has_value() ? a : b;
}

std::optional<std::string> CopyValueLearner::LearnAt(int placement, const LossSums& sums,
                                                     double factor) {
  const std::optional<LossSums::Split> split =
      sums.FreshAndCopy(static_cast<double>(options_.loss_min_rows));
  if (!split.has_value() || !(split->fresh_loss > 1e-12)) return std::nullopt;
  const double ratio = split->copy_loss / split->fresh_loss;
  const double read = std::clamp(1 - options_.loss_gap_scale * (1 - ratio), 0.0, 1.0);
  std::optional<double>& v = value_[placement];
  if (!v.has_value()) {  // start from what the fitted gains say, at this factor
    const double e = std::max(factor, 2.0);
    v = std::clamp((CopyGain(options_, placement, e) - 1) / (e - 1), 0.0, 1.0);
  }
  *v = 0.5 * *v + 0.5 * read;
  return fmt::format(
      "copies {} worth v = {:.2f} (loss on copies {:.4g} against {:.4g} on fresh rows over {:.0f} "
      "rows: {:.2f} this window)",
      kWhere[placement], *v, split->copy_loss, split->fresh_loss, split->rows, read);
}

AutoPlacementOptions CopyValueLearner::Apply(const AutoPlacementOptions& options) const {
  AutoPlacementOptions out = options;
  for (int p = 0; p < 3; ++p) {
    if (value_[p].has_value()) CopyValueOf(out, p) = *value_[p];
  }
  // A placement not read yet is worth no more a copy than the most
  // example-level one read before it.
  for (int q = 1; q < 3; ++q) {
    if (value_[q].has_value()) continue;
    std::optional<double> cap;
    for (int p = 0; p < q; ++p) {
      if (value_[p].has_value()) cap = cap.has_value() ? std::min(*cap, *value_[p]) : *value_[p];
    }
    if (!cap.has_value()) continue;
    std::vector<double> gains;
    for (int k = 2; k <= kCappedFactors + 1; ++k) {
      const double e = static_cast<double>(k);
      gains.push_back(std::min(CopyGain(options, q, e), 1 + (e - 1) * *cap));
    }
    CopyValueOf(out, q).reset();
    GainsOf(out, q) = std::move(gains);
  }
  return out;
}

}  // namespace dataecho::internal
