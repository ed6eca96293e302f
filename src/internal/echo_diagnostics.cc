// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "internal/echo_diagnostics.h"

#include <string>
#include <unordered_set>

#include "dataecho/augment.h"

namespace dataecho::internal {

void EchoDiagnostics::Add(const Batch& batch) {
  const absl::Span<const int64_t> ids = batch.source_indices.data<int64_t>();
  const uint64_t epoch = batch.epoch;
  absl::MutexLock lock(&mu_);
  const int64_t step = steps_++;
  rows_ += batch.num_rows;
  fresh_rows_ += batch.fresh_rows;
  std::unordered_set<uint64_t> in_batch;
  in_batch.reserve(ids.size());
  for (const int64_t id : ids) {
    const uint64_t key = MixSeed(static_cast<uint64_t>(id), epoch);
    if (!in_batch.insert(key).second) {
      ++duplicates_;
      continue;
    }
    auto [it, inserted] = last_seen_.try_emplace(key, step);
    if (!inserted) {
      distance_sum_ += static_cast<double>(step - it->second);
      ++distances_;
      it->second = step;
    }
  }
  if (last_seen_.size() > kMaxTracked) last_seen_.clear();  // forget, rather than grow
}

void EchoDiagnostics::AppendTo(std::vector<std::pair<std::string, double>>* extra) const {
  absl::MutexLock lock(&mu_);
  const double steps = static_cast<double>(steps_);
  extra->emplace_back("dup_rows_per_batch",
                      steps > 0 ? static_cast<double>(duplicates_) / steps : 0);
  extra->emplace_back(
      "fresh_row_fraction",
      rows_ > 0 ? static_cast<double>(fresh_rows_) / static_cast<double>(rows_) : 0);
  extra->emplace_back("copy_distance_steps",
                      distances_ > 0 ? distance_sum_ / static_cast<double>(distances_) : 0);
}

}  // namespace dataecho::internal
