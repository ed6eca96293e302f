// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// unbatch.h: Batches back into one Example per row (tf.data's unbatch).
//
//   auto rows = dataecho::FromVector(std::move(examples))
//                   .Batch({.batch_size = 256, .cast = dataecho::DType::kFloat16})
//                   .Unbatch();  // UnbatchStage::Make(batches, {})
//   for (dataecho::Example& row : rows) Use(row);
//   if (!rows.status().ok()) return rows.status();
//
// Row r of a batch becomes an Example whose component i is row r of the
// batch's component i (shape: the component's shape without its leading row
// dimension; dtype: the batch's, so after a cast the rows are cast too). The
// bytes are not copied: the row's tensors are slices of the batch's buffers.
// The row keeps its label, source index and repeat index (Batch::labels,
// source_indices, repeat_indices) and takes the batch's epoch (a Batch keeps
// one epoch, the newest among its rows: the rows of a batch that spans the
// end of one epoch and the start of the next all take the newer). A row of a batch echo's copy
// (Batch::repeat_index = k > 0) is a repeat too: its repeat index is at least k. (Record
// provenance, Example::record_offset and record_crc32c, is not kept in a Batch: 0.) Batches with no
// rows are skipped.
//
// Every batch must be well formed: labels int64 [rows], source_indices int64
// [rows], repeat_indices int32 [rows] with no negative value, and every
// component of rank >= 1 with `rows` as its leading dimension; otherwise
// Next() returns INVALID_ARGUMENT naming the stage, the batch (its position
// and epoch) and the column, and stays failed. An input error comes after
// the rows of the batches before it, and stays.
//
// Epochs and checkpoints (stage.h): it starts over with its input under a
// Repeat (dropping the rest of its batch). Its state is the input's and its
// position in the current batch; the batch itself is saved as a reference
// (the input's SaveRefs: Batch and PaddedBatch can reference the last batches
// they emitted, also behind a Prefetch) and made again at restore. A row it
// emitted is referenced as (its batch's reference, its row), for the rows of
// the last kHeldBatches batches it read, which it keeps: enough for an Echo
// after it, or the few rows the Python binding pulls ahead. A Shuffle after it
// holds older rows and cannot save its state (FAILED_PRECONDITION naming this
// stage): shuffle before batching.
//
// Memory: a row shares its batch's buffers (no copy), so a row kept alive
// keeps its whole batch alive, and this stage keeps its last kHeldBatches.
//
// Stats: elements = rows emitted, bytes = their payload bytes; input_wait =
// time blocked on an input that had nothing ready (stats.h); extra "batches"
// = batches read.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_UNBATCH_H_
#define DATAECHO_UNBATCH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/batch_options.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/stage.h"
#include "dataecho/stage_kit.h"

namespace dataecho {

struct UnbatchOptions {
  // Name shown in stats, states and errors.
  std::string name = "unbatch";
};

// The base is compiled once, in src/unbatch.cc.
extern template class DATAECHO_EXPORT UnaryStage<Example, Batch>;

class DATAECHO_EXPORT UnbatchStage final : public UnaryStage<Example, Batch> {
 public:
  // INVALID_ARGUMENT for a null input or an empty name.
  static absl::StatusOr<StagePtr<Example>> Make(StagePtr<Batch> input, UnbatchOptions options = {});

  // The batches it keeps, the current one included (see the file comment).
  static constexpr size_t kHeldBatches = 4;

  absl::StatusOr<std::optional<Example>> Next() override;
  bool TryNext(absl::StatusOr<std::optional<Example>>* out) override;
  // References to rows of the batches it holds; FAILED_PRECONDITION for an
  // older one.
  absl::Status SaveRefs(std::span<const Example* const> items, StateWriter& w) override;
  absl::Status Reread(StateReader& r, size_t n, std::vector<Example>* out) override;

 protected:
  absl::Status StickyError() const override { return error_; }
  absl::Status OnRestart(uint32_t epoch) override;
  std::string StateName() const override { return options_.name; }
  absl::Status SaveOwn(StateWriter& w) override;
  absl::Status RestoreOwn(StateReader& r) override;
  StageStats OwnStats() const override;

 private:
  UnbatchStage(StagePtr<Batch> input, UnbatchOptions options);
  // One request; false if no element is ready and !may_block.
  bool Step(bool may_block, absl::StatusOr<std::optional<Example>>* out);
  // OK if `b` is well formed (see the file comment); `position` names it.
  absl::Status CheckBatch(const Batch& b, int64_t position) const;
  // The input's batch named by the next reference in `r`, read again and checked.
  absl::StatusOr<Batch> RereadBatch(StateReader& r);
  // True while the newest batch held has rows left to emit.
  bool UnderWay() const { return current_ && row_ < held_.back().num_rows; }
  // Keeps `b` as the current batch (dropping the oldest beyond kHeldBatches).
  void Hold(Batch b, int64_t row);

  const UnbatchOptions options_;
  absl::Status error_;  // sticky: the input's or a bad batch's error
  // The last batches read (at most kHeldBatches), the current one last. (A
  // vector, not a deque: builder.h includes this header in every program.)
  std::vector<Batch> held_;
  bool current_ = false;  // held_.back() is the current batch (not one read again)
  int64_t row_ = 0;       // the current batch's next row
  StageTotals<> totals_;
  StageCounter batches_;
};

}  // namespace dataecho

#endif  // DATAECHO_UNBATCH_H_
