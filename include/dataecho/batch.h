// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// batch.h: group Examples into fused Batches.
//
// BatchStage copies each Example's components once into one contiguous,
// aligned buffer per component (shape [rows, ...]): the fused buffer a trainer
// transfers to the accelerator in one copy. Optionally, in the same pass, it
// casts to float32 / FP16 / BF16 and normalizes per channel:
//   y = (x * scale - mean[c]) / stddev[c],  c = index along the last dimension.
// Labels, source indices and repeat indices become per-row tensors, and the
// Batch counts its fresh rows. Buffers come from a pool and return to it when
// the last Batch viewing them is gone, so a batch costs O(1) allocations
// whatever its size (65,536 rows included).
//
//   auto batches = dataecho::BatchStage::Make(std::move(shuffled), {
//       .batch_size = 256, .drop_remainder = true, .cast = dataecho::DType::kFloat16,
//       .scale = 1.0f / 255, .mean = {0.286f}, .stddev = {0.353f}});
//   if (!batches.ok()) return batches.status();
//
// Every row must have the first row's component count, dtypes and shapes
// (else INVALID_ARGUMENT naming the row's source index). An input error comes
// after a batch of the rows read before it (unless drop_remainder), then stays.
//
// Memory: Make() refuses a batch_size whose index columns alone (20 bytes a
// row) exceed `max_bytes`, and the first row of each batch checks the whole
// batch (rows x row bytes) against it before its buffers are taken:
// RESOURCE_EXHAUSTED, sticky. batch_size above kMaxBatchSize is
// INVALID_ARGUMENT.
//
// A batch's epoch is the newest epoch among its rows. Below a Repeat, a new
// epoch starts a new batch (the last batch of an epoch may be partial).
//
// Checkpoints (stage.h, docs/checkpoint.md): no batch is half-built between
// Next() calls, so the state is the input's and whether it ended. A batch is
// referenced by its rows (each row's identity: source and repeat index, epoch
// and, for rows made from records, the record's offset and CRC-32C); only the
// last 16 batches emitted can be (what a batch Echo holds, also behind a
// Prefetch of batches).
//
// Large batches may split their rows among a few threads (`threads`).
//
// Stats: input_wait = time blocked on an input that had nothing ready
// (stats.h); extra "rows", "fresh_rows", "buffer_allocations" (pool misses;
// flat once warm).
//
// Thread safety: as every stage (stage.h); the row threads only run inside
// Next(). Batches may outlive the stage.
#ifndef DATAECHO_BATCH_H_
#define DATAECHO_BATCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "dataecho/batch_options.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/batching_stage.h"
#include "dataecho/stage.h"

namespace dataecho {

namespace internal {
class ForkJoin;
class RowChunks;
}  // namespace internal

class DATAECHO_EXPORT BatchStage final : public internal::BatchingStage {
 public:
  static absl::StatusOr<StagePtr<Batch>> Make(StagePtr<Example> input, BatchOptions options);
  ~BatchStage() override;

 protected:
  StageStats OwnStats() const override;
  uint64_t StateOptionsHash() const override;

 private:
  struct Layout;  // per-component shapes and conversion of the current batch
  BatchStage(StagePtr<Example> input, BatchOptions options);
  // A batch (internal/batching_stage.h): rows copied and converted into the
  // fused buffers as they arrive. With a row pool the calling thread gathers
  // the rows while the pool's other threads convert them (FillRows()).
  absl::Status StartBatch(const Example& first) override;
  absl::Status AddRow(Example&& row, int64_t r) override;
  absl::Status FillRows(absl::FunctionRef<Example*()> pull, int64_t* rows) override;
  absl::StatusOr<Batch> FinishBatch(int64_t rows) override;
  void DropRows() override;
  // A row pool's thread: converts chunks of rows until the batch is closed
  // and every row claimed.
  void ConvertChunks();
  // Copies (and converts) the components of `row` into row `r` of the batch.
  // Called concurrently for different rows by the row pool.
  void CopyRow(const Example& row, size_t r);

  const BatchOptions options_;
  std::unique_ptr<Layout> layout_;
  // With a row pool: the rows of the current batch, row r in pending_[r],
  // handed to the pool's threads in chunks of chunk_rows_ as they arrive.
  // A slot holds a row from AddRow() until the thread that converts it
  // destroys it; between batches every slot is empty.
  union PendingRow;
  std::unique_ptr<internal::ForkJoin> row_pool_;
  std::unique_ptr<internal::RowChunks> chunks_;
  size_t chunk_rows_ = 1;
  std::unique_ptr<PendingRow[]> pending_;
  // Without: the last few rows added, prefetched, each copied a few rows
  // later (src/batch.cc, kLagRows), row r in lagged_[r % lagged_.size()].
  std::vector<Example> lagged_;
};

}  // namespace dataecho

#endif  // DATAECHO_BATCH_H_
