// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/batching_stage.h: what BatchStage (batch.h) and PaddedBatchStage
// (padded_batch.h) share: the sticky error and the end of the input (their
// whole state: no batch is half-built between Next() calls), epochs, the
// counts behind their stats and the batch sizes their references carry. Not
// part of the public API.
//
//   class MyBatchStage final : public internal::BatchingStage {
//     // Next(): rows until batch_size, the end (done_) or an error (error_);
//     // each batch made is counted with CountBatch(b).
//   };
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_INTERNAL_BATCHING_STAGE_H_
#define DATAECHO_INTERNAL_BATCHING_STAGE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"

namespace dataecho::internal {

class DATAECHO_EXPORT BatchingStage : public UnaryStage<Batch, Example> {
 protected:
  // `name`: in stats, states and errors; `batch_size`: the most rows a batch has.
  BatchingStage(StagePtr<Example> input, std::string name, int64_t batch_size)
      : UnaryStage<Batch, Example>(std::move(input), Restarts::kWithInput),
        name_(std::move(name)),
        batch_size_(batch_size) {}

  // The lifecycle (stage.h): the error stays; a new epoch forgets the end.
  absl::Status StickyError() const override { return error_; }
  absl::Status OnRestart(uint32_t epoch) override;
  // The state: whether the input ended.
  std::string StateName() const override { return name_; }
  absl::Status SaveOwn(StateWriter& w) override;
  absl::Status RestoreOwn(StateReader& r) override;

  // Counts `b`, about to be emitted, in the stats.
  void CountBatch(const Batch& b);
  // The stats: batches, bytes, input_wait, "rows" and "fresh_rows", then `extra`.
  StageStats BatchStats(std::vector<std::pair<std::string, double>> extra) const;
  // The row counts of `n` batches whose references a SaveRefs() wrote (one
  // U64 each, before the rows' references), and in *total their sum.
  // DATA_LOSS naming the stage for a count outside 1..batch_size.
  absl::StatusOr<std::vector<uint64_t>> ReadBatchSizes(StateReader& r, size_t n,
                                                       uint64_t* total) const;

  const std::string& name() const { return name_; }

  absl::Status error_;  // sticky: the input's, a row's or a batch's error
  bool done_ = false;   // the input ended
  Counter batches_, rows_out_, bytes_, fresh_rows_, input_wait_ns_;

 private:
  const std::string name_;
  const int64_t batch_size_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_BATCHING_STAGE_H_
