// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// What echo did to the batches a consumer sees: duplicate rows within a batch
// (copies of one item that the shuffle did not spread), the mean distance in
// steps between two sightings of one item, the fraction of fresh rows per
// step. Fed every batch handed out; read from any thread.
#ifndef DATAECHO_SRC_INTERNAL_ECHO_DIAGNOSTICS_H_
#define DATAECHO_SRC_INTERNAL_ECHO_DIAGNOSTICS_H_

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dataecho/example.h"

namespace dataecho::internal {

class EchoDiagnostics {
 public:
  void Add(const Batch& batch);
  // "dup_rows_per_batch", "fresh_row_fraction", "copy_distance_steps".
  void AppendTo(std::vector<std::pair<std::string, double>>* extra) const;

 private:
  // Items remembered for the distance: the most recent ones, at most this many.
  static constexpr size_t kMaxTracked = 1 << 16;
  mutable absl::Mutex mu_;
  int64_t steps_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t rows_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t fresh_rows_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t duplicates_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t distances_ ABSL_GUARDED_BY(mu_) = 0;
  double distance_sum_ ABSL_GUARDED_BY(mu_) = 0;
  // (source_index, epoch) -> the step it was last seen.
  std::unordered_map<uint64_t, int64_t> last_seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_ECHO_DIAGNOSTICS_H_
