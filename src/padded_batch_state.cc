// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// padded_batch_state.cc: PaddedBatchStage's epochs and checkpoint methods
// (include/dataecho/padded_batch.h, docs/checkpoint.md).

#include <utility>
#include <vector>

#include "dataecho/padded_batch.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

void PaddedBatchStage::KeepLast(const Batch& b) {
  last_rows_.swap(rows_);  // rows_ is cleared when the next batch starts
  rows_.clear();
  last_sources_ = b.source_indices.buffer().data();
}

absl::Status PaddedBatchStage::OnRestart(uint32_t epoch) {
  rows_.clear();
  return BatchingStage::OnRestart(epoch);
}

uint64_t PaddedBatchStage::StateOptionsHash() const {
  OptionsHash h;
  h.Add(options_.batch_size).Add(static_cast<uint64_t>(options_.drop_remainder));
  h.Add(static_cast<uint64_t>(options_.masks)).Add(static_cast<uint64_t>(options_.lengths));
  for (const Shape& shape : options_.padded_shapes) {
    h.Add(static_cast<uint64_t>(shape.size()));
    for (int64_t d : shape) h.Add(d);
  }
  for (double v : options_.padding_values) h.Add(v);
  return h.value();
}

absl::Status PaddedBatchStage::SaveRefs(std::span<const Batch* const> items, StateWriter& w) {
  for (const Batch* b : items) {
    if (b->source_indices.buffer().data() != last_sources_ ||
        static_cast<size_t>(b->num_rows) != last_rows_.size()) {
      return absl::FailedPreconditionError(
          fmt::format("{} can reference only the last batch it emitted (a batch echo's); a "
                      "Shuffle of batches cannot save its state",
                      options_.name));
    }
  }
  std::vector<const Example*> rows;
  for (const Batch* b : items) {
    w.U64(static_cast<uint64_t>(b->num_rows));
    for (const Example& row : last_rows_) rows.push_back(&row);
  }
  return input().SaveRefs(rows, w);
}

absl::Status PaddedBatchStage::Reread(StateReader& r, size_t n, std::vector<Batch>* out) {
  uint64_t total = 0;
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<uint64_t> sizes, ReadBatchSizes(r, n, &total));
  std::vector<Example> rows;
  DATAECHO_RETURN_IF_ERROR(input().Reread(r, total, &rows));
  if (rows.size() != total) {
    return absl::DataLossError(
        fmt::format("pipeline state: {}: batch rows not read again", options_.name));
  }
  // Made again as Next() made them; statistics are not part of the state.
  const int64_t counts[] = {batches_.Get(),    rows_out_.Get(),   bytes_.Get(),
                            fresh_rows_.Get(), data_cells_.Get(), padding_cells_.Get()};
  size_t next = 0;
  for (uint64_t size : sizes) {
    rows_.clear();
    for (uint64_t i = 0; i < size; ++i) {
      DATAECHO_RETURN_IF_ERROR(CheckRow(rows[next]));
      rows_.push_back(std::move(rows[next++]));
    }
    DATAECHO_ASSIGN_OR_RETURN(Batch b, MakeBatch());
    KeepLast(b);
    out->push_back(std::move(b));
  }
  batches_.Set(counts[0]);
  rows_out_.Set(counts[1]);
  bytes_.Set(counts[2]);
  fresh_rows_.Set(counts[3]);
  data_cells_.Set(counts[4]);
  padding_cells_.Set(counts[5]);
  return absl::OkStatus();
}

}  // namespace dataecho
