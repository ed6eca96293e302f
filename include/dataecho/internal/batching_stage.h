// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/batching_stage.h: what BatchStage (batch.h) and PaddedBatchStage
// (padded_batch.h) share. Not part of the public API.
//
// The base runs Next() and the checkpoint methods; a subclass only builds
// batches out of rows. Written once here:
//   - the fill loop: rows pulled until batch_size, the end of the input or an
//     error (a row whose component count is not the first row's is
//     INVALID_ARGUMENT naming its source index); an input error comes after a
//     batch of the rows read before it (unless drop_remainder), then stays
//     (sticky, as a row's or a batch's);
//   - the per-row columns (labels, source and repeat indices), the fresh rows,
//     the epoch and the rows' fingerprint of every batch;
//   - the state: whether the input ended (no batch is half-built between
//     Next() calls), epochs (a new one forgets the end), and references to the
//     last kReferencedBatches batches emitted (each row's source and repeat
//     index, epoch, record offset and CRC-32C; no payload is held);
//   - the stats: batches, bytes, input_wait, "rows", "fresh_rows" and
//     "buffer_allocations".
//
//   class MyBatchStage final : public internal::BatchingStage {
//     absl::Status StartBatch(const Example& first) override;   // a batch's first row
//     absl::Status AddRow(Example&& row, int64_t r) override;   // row r (0 included)
//     absl::StatusOr<Batch> FinishBatch(int64_t rows) override; // its components
//   };
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_INTERNAL_BATCHING_STAGE_H_
#define DATAECHO_INTERNAL_BATCHING_STAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/ring_queue.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"

namespace dataecho::internal {

class BufferPool;

class DATAECHO_EXPORT BatchingStage : public UnaryStage<Batch, Example> {
 public:
  ~BatchingStage() override;

  absl::StatusOr<std::optional<Batch>> Next() final;
  // Checkpoints: a batch is referenced by its rows' references; only the last
  // kReferencedBatches batches emitted can be (what a batch Echo holds, also
  // behind a Prefetch of batches). A batch is made again from its rows.
  absl::Status SaveRefs(std::span<const Batch* const> items, StateWriter& w) final;
  absl::Status Reread(StateReader& r, size_t n, std::vector<Batch>* out) final;

  // Batches that can be referenced: enough for a batch Echo behind a Prefetch.
  static constexpr size_t kReferencedBatches = 16;

 protected:
  // `name`: in stats, states and errors; `batch_size`: the most rows a batch
  // has; `alignment`: of every buffer of pool().
  BatchingStage(StagePtr<Example> input, std::string name, int64_t batch_size, bool drop_remainder,
                size_t alignment);

  // --- What a subclass builds ---
  // Row 0 of a new batch, before AddRow(): checks it (and the whole batch it
  // starts) before any buffer of the batch is taken.
  virtual absl::Status StartBatch(const Example& first) = 0;
  // Row `r` of the batch (with row 0's component count, and its columns
  // already set): checked, then kept or copied.
  virtual absl::Status AddRow(Example&& row, int64_t r) = 0;
  // The components of the batch of the `rows` rows added; the base adds
  // num_rows, the per-row columns, fresh_rows, epoch and rows_crc32c.
  virtual absl::StatusOr<Batch> FinishBatch(int64_t rows) = 0;
  // Adds the rows `pull` points to (moved from; until it returns nullptr or
  // the batch is full) to a new batch, counted in *rows; the first error of
  // StartBatch() or AddRow(). Override to run GatherRows() otherwise (e.g.
  // beside threads that copy the rows).
  virtual absl::Status FillRows(absl::FunctionRef<Example*()> pull, int64_t* rows) {
    return GatherRows(pull, rows);
  }
  // Lets go of the rows added (an error, a dropped remainder, a new epoch).
  virtual void DropRows() {}
  // Counts `b`, about to be emitted, in the stats (a re-read batch is not).
  virtual void CountBatch(const Batch& b);
  // The stats: batches, bytes, input_wait, "rows", "fresh_rows", then
  // `extra`, then "buffer_allocations".
  StageStats BatchStats(std::vector<std::pair<std::string, double>> extra) const;

  // The fill loop FillRows() runs.
  absl::Status GatherRows(absl::FunctionRef<Example*()> pull, int64_t* rows);
  BufferPool& pool() { return *pool_; }
  const std::string& name() const { return name_; }
  int64_t batch_size() const { return batch_size_; }

  // The lifecycle (stage.h): the error stays; a new epoch forgets the end.
  absl::Status StickyError() const final { return error_; }
  absl::Status OnRestart(uint32_t epoch) final;
  // The state: whether the input ended.
  std::string StateName() const final { return name_; }
  absl::Status SaveOwn(StateWriter& w) final;
  absl::Status RestoreOwn(StateReader& r) final;

 private:
  // What a reference to a row needs besides its source and repeat index.
  struct RowRef {
    uint64_t record_offset = 0;
    uint32_t epoch = 0;
    uint32_t record_crc32c = 0;
  };
  // The rows of one of the last batches emitted, and what identifies it (its
  // source_indices buffer: no two live batches share one).
  struct Emitted {
    const uint8_t* sources = nullptr;
    std::vector<RowRef> rows;
  };

  // Notes row `r` of the batch being built: its columns and reference.
  void NoteRow(const Example& row, int64_t r);
  // FinishBatch() and what the base adds; the batch is then referenced.
  absl::StatusOr<Batch> MakeBatch();
  // b's labels, source_indices and repeat_indices, of row_index_.
  absl::Status MakeColumns(Batch* b);
  // The row counts of `n` batches whose references a SaveRefs() wrote, and in
  // *total their sum; DATA_LOSS naming the stage for one outside 1..batch_size.
  absl::StatusOr<std::vector<uint64_t>> ReadBatchSizes(StateReader& r, size_t n,
                                                       uint64_t* total) const;

  const std::string name_;
  const int64_t batch_size_;
  const bool drop_remainder_;
  const std::shared_ptr<BufferPool> pool_;
  absl::Status error_;  // sticky: the input's, a row's or a batch's error
  bool done_ = false;   // the input ended
  // A row's entries in the per-row columns of its batch.
  struct RowIndex {
    int64_t label = 0;
    int64_t source = 0;
    int32_t repeat = 0;
  };

  // The batch being built: its rows' columns, fresh rows, newest epoch, the
  // fold of its rows' record_crc32c, and its rows' references.
  size_t components_ = 0;  // of its first row
  std::vector<RowIndex> row_index_;
  int64_t fresh_ = 0;
  uint32_t epoch_ = 0;
  uint32_t rows_crc32c_ = 0;
  std::vector<RowRef> row_refs_;
  RingQueue<Emitted> emitted_;  // the last kReferencedBatches emitted, oldest first
  Counter batches_, rows_out_, bytes_, fresh_rows_, input_wait_ns_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_BATCHING_STAGE_H_
