// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// row_columns.h: a batch's per-row index columns (labels, source and repeat
// indices), as BatchStage and PaddedBatchStage make them.
//
//   internal::RowColumns columns;
//   columns.Get(*pool, rows, [](size_t bytes) { return bytes; });
//   for (size_t r = 0; r < rows; ++r) columns.Set(r, row[r]);
//   DATAECHO_RETURN_IF_ERROR(columns.MoveTo(rows, &batch));
#ifndef DATAECHO_SRC_ROW_COLUMNS_H_
#define DATAECHO_SRC_ROW_COLUMNS_H_

#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "buffer_pool.h"
#include "dataecho/example.h"
#include "dataecho/tensor.h"

namespace dataecho::internal {

struct RowColumns {
  MutableBuffer labels, sources, repeats;

  // Buffers for up to `rows` rows; `block(bytes)`: the pool block for `bytes`.
  template <typename Block>
  void Get(BufferPool& pool, size_t rows, Block block) {
    labels = pool.Get(block(rows * sizeof(int64_t)));
    sources = pool.Get(block(rows * sizeof(int64_t)));
    repeats = pool.Get(block(rows * sizeof(int32_t)));
  }
  // Row `r`'s label, source and repeat index.
  void Set(size_t r, const Example& row) {
    const int64_t label = row.label;
    const auto source = static_cast<int64_t>(row.source_index);
    const auto repeat = static_cast<int32_t>(row.repeat_index);
    std::memcpy(labels.data() + r * sizeof(int64_t), &label, sizeof(label));
    std::memcpy(sources.data() + r * sizeof(int64_t), &source, sizeof(source));
    std::memcpy(repeats.data() + r * sizeof(int32_t), &repeat, sizeof(repeat));
  }
  // The first `rows` rows, as b->labels, source_indices and repeat_indices.
  absl::Status MoveTo(size_t rows, Batch* b) {
    auto column = [rows](MutableBuffer& m, DType dtype) {
      m.Truncate(rows * DTypeSize(dtype));
      return Tensor::Make(dtype, {static_cast<int64_t>(rows)}, std::move(m).Freeze());
    };
    absl::StatusOr<Tensor> l = column(labels, DType::kInt64);
    if (!l.ok()) return l.status();
    absl::StatusOr<Tensor> s = column(sources, DType::kInt64);
    if (!s.ok()) return s.status();
    absl::StatusOr<Tensor> k = column(repeats, DType::kInt32);
    if (!k.ok()) return k.status();
    b->labels = *std::move(l);
    b->source_indices = *std::move(s);
    b->repeat_indices = *std::move(k);
    return absl::OkStatus();
  }
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_ROW_COLUMNS_H_
