// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// batch_state.cc: BatchStage's checkpoint methods (include/dataecho/batch.h,
// docs/checkpoint.md).

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/batch.h"
#include "dataecho/status_macros.h"

namespace dataecho {

uint64_t BatchStage::StateOptionsHash() const {
  return OptionsHash()
      .Add(options_.batch_size)
      .Add(static_cast<uint64_t>(options_.drop_remainder))
      .value();
}

absl::Status BatchStage::SaveRefs(std::span<const Batch* const> items, StateWriter& w) {
  std::vector<Example> rows;
  for (const Batch* b : items) {
    // The newest emitted batch with this buffer is b (an older one with the
    // same buffer is gone: b reuses its buffer).
    const Emitted* found = nullptr;
    for (size_t i = emitted_.size(); i-- > 0;) {
      if (emitted_[i].sources == b->source_indices.buffer().data()) {
        found = &emitted_[i];
        break;
      }
    }
    if (found == nullptr || static_cast<size_t>(b->num_rows) != found->rows.size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          options_.name, " can reference only the last ", kReferencedBatches,
          " batches it emitted (a batch echo's); a Shuffle of batches cannot save its state"));
    }
    w.U64(static_cast<uint64_t>(b->num_rows));
    // Rows that name themselves: what the input's references need.
    const uint8_t* sources = b->source_indices.buffer().data();
    const uint8_t* repeats = b->repeat_indices.buffer().data();
    for (int64_t i = 0; i < b->num_rows; ++i) {
      Example row;
      int64_t source = 0;
      int32_t repeat = 0;
      std::memcpy(&source, sources + i * sizeof(int64_t), sizeof(source));
      std::memcpy(&repeat, repeats + i * sizeof(int32_t), sizeof(repeat));
      row.source_index = static_cast<uint64_t>(source);
      row.repeat_index = static_cast<uint32_t>(repeat);
      const RowRef& ref = found->rows[static_cast<size_t>(i)];
      row.epoch = ref.epoch;
      row.record_offset = ref.record_offset;
      row.record_crc32c = ref.record_crc32c;
      rows.push_back(std::move(row));
    }
  }
  std::vector<const Example*> ptrs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) ptrs[i] = &rows[i];
  return input().SaveRefs(ptrs, w);
}

absl::Status BatchStage::Reread(StateReader& r, size_t n, std::vector<Batch>* out) {
  uint64_t total = 0;
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<uint64_t> sizes, ReadBatchSizes(r, n, &total));
  std::vector<Example> rows;
  DATAECHO_RETURN_IF_ERROR(input().Reread(r, total, &rows));
  if (rows.size() != total) return absl::DataLossError("pipeline state: batch rows not read");
  size_t next = 0;
  for (uint64_t size : sizes) {
    const size_t end = next + size;
    int64_t added = 0;
    DATAECHO_RETURN_IF_ERROR(
        FillRows([&]() -> Example* { return next == end ? nullptr : &rows[next++]; }, &added));
    if (static_cast<uint64_t>(added) != size) {
      return absl::DataLossError("pipeline state: a batch larger than batch_size");
    }
    DATAECHO_ASSIGN_OR_RETURN(Batch b, FinishBatch());
    out->push_back(std::move(b));
  }
  return absl::OkStatus();
}

}  // namespace dataecho
