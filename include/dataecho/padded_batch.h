// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// padded_batch.h: batch Examples whose components vary in shape (sequences,
// token lists, images of several sizes), padding each to a common shape.
//
// PaddedBatchStage groups `batch_size` Examples into one Batch like
// BatchStage (batch.h), but the rows' components need only agree in count,
// dtype and rank. Each component is padded, per batch, to the longest row in
// every dimension, or to a fixed `padded_shapes` entry (-1 in it = the
// longest in the batch), with `padding_values` (default 0). The Batch's
// components are then, for n input components:
//
//   components[i]           data of component i, [rows, padded dims...]
//   components[n + i]       its mask (if `masks`): uint8 [rows, padded dims...],
//                           1 where a row has data, 0 where it is padding
//   components[n * k + i]   its lengths (if `lengths`; k = 2 with masks, else
//                           1): int64 [rows, rank], each row's unpadded shape
//
// (MaskIndex() and LengthsIndex() compute those positions.) Labels, source,
// repeat indices and fresh rows are as in BatchStage.
//
//   // Token sequences of 1..512 int32s -> [32, longest] + mask + lengths:
//   auto batches = dataecho::FromVector(std::move(sequences))
//       .PaddedBatch({.batch_size = 32, .padding_values = {-1}});
//   // Fixed width 512 for component 0 (a longer row is INVALID_ARGUMENT):
//   auto fixed = dataecho::PaddedBatchStage::Make(std::move(in),
//       {.batch_size = 32, .padded_shapes = {{512}}});
//
// Rows with another component count, dtype or rank than the batch's first
// row, or longer than a fixed padded dimension, are INVALID_ARGUMENT naming
// the row's source index. An input error comes after a batch of the rows read
// before it (unless drop_remainder), then stays.
//
// Memory, as BatchStage: Make() refuses a batch_size whose index columns
// alone (20 bytes a row), or whose fixed `padded_shapes` entries (at least a
// byte a cell), exceed `max_bytes`; the first row of a batch checks
// batch_size rows padded to at least its shape, and the gathered rows check
// the whole batch (data, masks, lengths: every row padded to the longest)
// before any buffer is taken: RESOURCE_EXHAUSTED naming the padded shape,
// sticky. Every product of sizes is overflow-checked (memory.h). batch_size
// above BatchOptions::kMaxBatchSize is INVALID_ARGUMENT.
//
// Epochs and checkpoints (stage.h, docs/checkpoint.md), as BatchStage:
// Restart(e) restarts the input and forgets its end; the state is whether the
// input ended (no batch is half-built between Next() calls). The last 16
// batches emitted (what a batch echo holds) are referenced by their rows'
// references, as in BatchStage; no row is held for it.
//
// Stats: elements = batches; input_wait = time blocked on an input with
// nothing ready; extra "rows", "fresh_rows", "padding_fraction" (padding
// cells / all data cells: the cost of padding), "buffer_allocations".
//
// Thread safety: as every stage (stage.h). Batches may outlive the stage.
#ifndef DATAECHO_PADDED_BATCH_H_
#define DATAECHO_PADDED_BATCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/batch_options.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/batching_stage.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage.h"
#include "dataecho/tensor.h"

namespace dataecho {

class DATAECHO_EXPORT PaddedBatchStage final : public internal::BatchingStage {
 public:
  static absl::StatusOr<StagePtr<Batch>> Make(StagePtr<Example> input, PaddedBatchOptions options);
  ~PaddedBatchStage() override;

 protected:
  StageStats OwnStats() const override;
  uint64_t StateOptionsHash() const override;

 private:
  PaddedBatchStage(StagePtr<Example> input, PaddedBatchOptions options);
  // A batch (internal/batching_stage.h): the rows are gathered (handles, not
  // copies), then padded into the batch's buffers.
  absl::Status StartBatch(const Example& first) override;
  absl::Status AddRow(Example&& row, int64_t r) override;
  absl::StatusOr<Batch> FinishBatch(int64_t rows) override;
  void DropRows() override { rows_.clear(); }
  void CountBatch(const Batch& b) override;
  absl::Status CheckRow(const Example& row) const;
  // Each component's padded shape for the rows of rows_ (INVALID_ARGUMENT for
  // a row longer than a fixed dimension).
  absl::StatusOr<std::vector<Shape>> PaddedShapes() const;
  // RESOURCE_EXHAUSTED unless `rows` rows of the components of `first`, padded
  // to `padded`, fit the cap; `first_row`: the estimate from a batch's first
  // row (else the gathered batch).
  absl::Status CheckBatchBytes(int64_t rows, const std::vector<Shape>& padded, const Example& first,
                               bool first_row) const;

  const PaddedBatchOptions options_;
  std::vector<Example> rows_;  // the batch being gathered (handles, not copies)
  // Cells of the last batch made (data, padding), counted when it is emitted.
  int64_t batch_data_cells_ = 0, batch_padding_cells_ = 0;
  internal::Counter data_cells_, padding_cells_;
};

}  // namespace dataecho

#endif  // DATAECHO_PADDED_BATCH_H_
