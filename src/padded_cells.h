// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// padded_cells.h: the byte-level work of PaddedBatchStage (padded_batch.h):
// copying a row-major box into a larger padded array, and padding cells of
// any dtype.
#ifndef DATAECHO_SRC_PADDED_CELLS_H_
#define DATAECHO_SRC_PADDED_CELLS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/tensor.h"

namespace dataecho::internal {

// Calls fn(src_offset, dst_offset, bytes) for every contiguous run of a
// row-major box of shape `s` stored at the origin of a row-major array of
// shape `p` (p >= s in every dimension); offsets in bytes, `es` bytes a cell.
template <typename Fn>
void ForEachRun(const int64_t* s, const int64_t* p, int rank, size_t es, size_t src, size_t dst,
                Fn& fn) {
  if (rank == 0) {
    fn(src, dst, es);
    return;
  }
  // Trailing dimensions that agree make the whole sub-box one run.
  if (std::equal(s + 1, s + rank, p + 1)) {
    fn(src, dst, static_cast<size_t>(NumElements({s, static_cast<size_t>(rank)})) * es);
    return;
  }
  const auto src_stride =
      static_cast<size_t>(NumElements({s + 1, static_cast<size_t>(rank - 1)})) * es;
  const auto dst_stride =
      static_cast<size_t>(NumElements({p + 1, static_cast<size_t>(rank - 1)})) * es;
  for (int64_t k = 0; k < s[0]; ++k) {
    ForEachRun(s + 1, p + 1, rank - 1, es, src + static_cast<size_t>(k) * src_stride,
               dst + static_cast<size_t>(k) * dst_stride, fn);
  }
}

// The bytes of one cell of `dtype` holding `value`; INVALID_ARGUMENT if the
// dtype cannot hold it.
absl::StatusOr<std::vector<uint8_t>> PaddingCell(DType dtype, double value, size_t component);

// Writes `cells` copies of `cell` at `dst`.
void FillCells(uint8_t* dst, size_t cells, const std::vector<uint8_t>& cell);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_PADDED_CELLS_H_
