// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/padded_batch.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "buffer_pool.h"
#include "dataecho/batch.h"
#include "dataecho/memory.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "padded_cells.h"
#include "row_convert.h"

namespace dataecho {
namespace {

constexpr char kCapOption[] = "PaddedBatchOptions::max_bytes";

// Pool blocks come in size classes (8 per power of two, at most 12.5% unused)
// so that batches whose padded shapes differ a little reuse each other's blocks.
size_t SizeClass(size_t n) {
  if (n <= 256) return 256;
  const int bits = std::bit_width(n - 1);
  const size_t granule = size_t{1} << std::max(bits - 3, 6);
  return (n + granule - 1) / granule * granule;
}

}  // namespace

absl::Status PaddedBatchOptions::Validate() const {
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        fmt::format("{}: batch_size must be >= 1, got {}", name, batch_size));
  }
  if (batch_size > BatchOptions::kMaxBatchSize) {
    return absl::InvalidArgumentError(
        fmt::format("{}: batch_size must be at most {} (BatchOptions::kMaxBatchSize), got {}", name,
                    BatchOptions::kMaxBatchSize, batch_size));
  }
  if (max_bytes < 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: max_bytes must be >= 0, got {}", name, max_bytes));
  }
  for (size_t i = 0; i < padded_shapes.size(); ++i) {
    for (int64_t d : padded_shapes[i]) {
      if (d < -1) {
        return absl::InvalidArgumentError(
            fmt::format("{}: padded_shapes[{}] = {}: dimensions must be >= 0 or -1 (longest)", name,
                        i, ShapeString(padded_shapes[i])));
      }
    }
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: alignment must be a power of two", name));
  }
  return absl::OkStatus();
}

PaddedBatchStage::PaddedBatchStage(StagePtr<Example> input, PaddedBatchOptions options)
    : BatchingStage(std::move(input), options.name, options.batch_size, options.drop_remainder,
                    options.alignment),
      options_(std::move(options)) {}

PaddedBatchStage::~PaddedBatchStage() = default;

absl::StatusOr<StagePtr<Batch>> PaddedBatchStage::Make(StagePtr<Example> input,
                                                       PaddedBatchOptions options) {
  DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
  DATAECHO_RETURN_IF_ERROR(options.Validate());
  // What every full batch needs at least: its index columns, and a byte a
  // cell of each fully fixed padded shape.
  DATAECHO_RETURN_IF_ERROR(CheckMemoryEstimate(options.name, "batch_size", options.batch_size,
                                               BatchOptions::kIndexBytesPerRow, options.max_bytes,
                                               kCapOption));
  for (size_t i = 0; i < options.padded_shapes.size(); ++i) {
    const Shape& fixed = options.padded_shapes[i];
    if (fixed.empty() || std::any_of(fixed.begin(), fixed.end(), [](int64_t d) { return d < 0; }))
      continue;
    Shape dims{options.batch_size};
    dims.insert(dims.end(), fixed.begin(), fixed.end());
    DATAECHO_RETURN_IF_ERROR(CheckShapeBytes(options.name,
                                             fmt::format("batch_size x padded_shapes[{}]", i), dims,
                                             1, options.max_bytes, kCapOption)
                                 .status());
  }
  return StagePtr<Batch>(new PaddedBatchStage(std::move(input), std::move(options)));
}

absl::Status PaddedBatchStage::CheckBatchBytes(int64_t rows, const std::vector<Shape>& padded,
                                               const Example& first, bool first_row) const {
  int64_t row_bytes = BatchOptions::kIndexBytesPerRow;
  for (size_t i = 0; i < padded.size(); ++i) {
    const int64_t cells = SaturatingProduct(padded[i]);
    const auto cell_bytes =
        static_cast<int64_t>(DTypeSize(first.components[i].dtype())) + (options_.masks ? 1 : 0);
    const int64_t lengths = options_.lengths ? static_cast<int64_t>(padded[i].size()) * 8 : 0;
    row_bytes = SaturatingSum({row_bytes, SaturatingProduct({cells, cell_bytes}), lengths});
  }
  const int64_t need = SaturatingProduct({rows, row_bytes});
  if (need <= EffectiveMemoryCap(options_.max_bytes)) return absl::OkStatus();
  std::vector<std::string> shapes;
  for (const Shape& p : padded) shapes.push_back(ShapeString(p));
  return CheckBytes(options_.name,
                    fmt::format("{} padded to {} ({} bytes a row)",
                                first_row ? fmt::format("batch_size = {} rows like example {}",
                                                        rows, first.source_index)
                                          : fmt::format("a batch of {} rows", rows),
                                fmt::join(shapes, " and "), row_bytes),
                    need, options_.max_bytes, kCapOption)
      .status();
}

absl::StatusOr<std::vector<Shape>> PaddedBatchStage::PaddedShapes() const {
  const size_t n = rows_.front().components.size();
  std::vector<Shape> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int rank = rows_.front().components[i].rank();
    // The longest row per dimension, or the fixed size.
    Shape& padded = out[i];
    padded.assign(static_cast<size_t>(rank), 0);
    for (const Example& row : rows_) {
      for (int d = 0; d < rank; ++d) padded[d] = std::max(padded[d], row.components[i].dim(d));
    }
    if (i >= options_.padded_shapes.size() || options_.padded_shapes[i].empty()) continue;
    const Shape& fixed = options_.padded_shapes[i];
    if (static_cast<int>(fixed.size()) != rank) {
      return absl::InvalidArgumentError(
          fmt::format("{}: padded_shapes[{}] = {} has rank {}, component {} has rank {}",
                      options_.name, i, ShapeString(fixed), fixed.size(), i, rank));
    }
    for (int d = 0; d < rank; ++d) {
      if (fixed[d] < 0) continue;
      for (const Example& row : rows_) {
        if (row.components[i].dim(d) > fixed[d]) {
          return absl::InvalidArgumentError(
              fmt::format("{}: example {} component {} is {}, longer than padded_shapes[{}] = {}",
                          options_.name, row.source_index, i,
                          ShapeString(row.components[i].shape()), i, ShapeString(fixed)));
        }
      }
      padded[d] = fixed[d];
    }
  }
  return out;
}

absl::Status PaddedBatchStage::CheckRow(const Example& row) const {
  if (rows_.empty()) return absl::OkStatus();
  const Example& first = rows_.front();
  for (size_t i = 0; i < row.components.size(); ++i) {
    const Tensor& t = row.components[i];
    const Tensor& f = first.components[i];
    if (t.dtype() != f.dtype() || t.rank() != f.rank()) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: example {} component {} is {}{}, the batch's first row has {}{} (padding needs "
          "the same dtype and rank)",
          options_.name, row.source_index, i, DTypeName(t.dtype()), ShapeString(t.shape()),
          DTypeName(f.dtype()), ShapeString(f.shape())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> PaddedBatchStage::FinishBatch(int64_t num_rows) {
  const size_t n = rows_.front().components.size();
  const auto rows = static_cast<size_t>(num_rows);
  // Every row padded to the longest: the whole batch against the cap before
  // any buffer is taken.
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<Shape> padded_shapes, PaddedShapes());
  DATAECHO_RETURN_IF_ERROR(CheckBatchBytes(static_cast<int64_t>(rows), padded_shapes, rows_.front(),
                                           /*first_row=*/false));
  Batch b;
  std::vector<Tensor> masks, lengths;
  batch_data_cells_ = 0;
  batch_padding_cells_ = 0;
  for (size_t i = 0; i < n; ++i) {
    const DType dtype = rows_.front().components[i].dtype();
    const int rank = rows_.front().components[i].rank();
    const size_t es = DTypeSize(dtype);
    const Shape& padded = padded_shapes[i];
    const double value = i < options_.padding_values.size() ? options_.padding_values[i] : 0.0;
    DATAECHO_ASSIGN_OR_RETURN(std::vector<uint8_t> pad, internal::PaddingCell(dtype, value, i));
    const auto cells = static_cast<size_t>(NumElements(padded));
    MutableBuffer data = pool().Get(SizeClass(rows * cells * es));
    MutableBuffer mask = options_.masks ? pool().Get(SizeClass(rows * cells)) : MutableBuffer();
    MutableBuffer shape = options_.lengths
                              ? pool().Get(SizeClass(rows * static_cast<size_t>(rank) * 8))
                              : MutableBuffer();
    int64_t data_cells = 0;
    for (size_t r = 0; r < rows; ++r) {
      if (r + internal::kPrefetchRowsAhead < rows) {
        const Buffer& ahead = rows_[r + internal::kPrefetchRowsAhead].components[i].buffer();
        internal::PrefetchRowBytes(ahead.data(), ahead.size());
      }
      const Tensor& t = rows_[r].components[i];
      uint8_t* dst = data.data() + r * cells * es;
      uint8_t* m = options_.masks ? mask.data() + r * cells : nullptr;
      const uint8_t* src = t.buffer().data();
      if (rank == 0 || std::equal(t.shape().begin() + 1, t.shape().end(), padded.begin() + 1)) {
        // A prefix (sequences, or the same shape): one copy, then the padding.
        const auto n = static_cast<size_t>(t.num_elements());
        std::memcpy(dst, src, n * es);
        internal::FillCells(dst + n * es, cells - n, pad);
        if (m != nullptr) {
          std::memset(m, 1, n);
          std::memset(m + n, 0, cells - n);
        }
      } else {
        internal::FillCells(dst, cells, pad);
        if (m != nullptr) std::memset(m, 0, cells);
        auto copy = [&](size_t so, size_t d, size_t len) {
          std::memcpy(dst + d, src + so, len);
          if (m != nullptr) std::memset(m + d / es, 1, len / es);
        };
        internal::ForEachRun(t.shape().data(), padded.data(), rank, es, 0, 0, copy);
      }
      if (options_.lengths && rank > 0) {
        std::memcpy(shape.data() + r * static_cast<size_t>(rank) * 8, t.shape().data(),
                    static_cast<size_t>(rank) * 8);
      }
      data_cells += t.num_elements();
    }
    batch_data_cells_ += data_cells;
    batch_padding_cells_ += static_cast<int64_t>(rows * cells) - data_cells;
    Shape out_shape{static_cast<int64_t>(rows)};
    out_shape.insert(out_shape.end(), padded.begin(), padded.end());
    data.Truncate(rows * cells * es);
    DATAECHO_ASSIGN_OR_RETURN(Tensor dt, Tensor::Make(dtype, out_shape, std::move(data).Freeze()));
    b.components.push_back(std::move(dt));
    if (options_.masks) {
      mask.Truncate(rows * cells);
      DATAECHO_ASSIGN_OR_RETURN(Tensor mt,
                                Tensor::Make(DType::kUInt8, out_shape, std::move(mask).Freeze()));
      masks.push_back(std::move(mt));
    }
    if (options_.lengths) {
      shape.Truncate(rows * static_cast<size_t>(rank) * 8);
      DATAECHO_ASSIGN_OR_RETURN(Tensor lt,
                                Tensor::Make(DType::kInt64, {static_cast<int64_t>(rows), rank},
                                             std::move(shape).Freeze()));
      lengths.push_back(std::move(lt));
    }
  }
  for (Tensor& t : masks) b.components.push_back(std::move(t));
  for (Tensor& t : lengths) b.components.push_back(std::move(t));
  rows_.clear();
  return b;
}

absl::Status PaddedBatchStage::StartBatch(const Example& first) {
  rows_.clear();
  // batch_size rows padded to at least this one's shape (and the fixed
  // dimensions): refused before the rows are gathered.
  std::vector<Shape> least;
  for (size_t i = 0; i < first.components.size(); ++i) {
    Shape shape = first.components[i].shape();
    if (i < options_.padded_shapes.size() && options_.padded_shapes[i].size() == shape.size()) {
      for (size_t d = 0; d < shape.size(); ++d)
        shape[d] = std::max(shape[d], options_.padded_shapes[i][d]);
    }
    least.push_back(std::move(shape));
  }
  return CheckBatchBytes(options_.batch_size, least, first, /*first_row=*/true);
}

absl::Status PaddedBatchStage::AddRow(Example&& row, int64_t /*r*/) {
  DATAECHO_RETURN_IF_ERROR(CheckRow(row));
  rows_.push_back(std::move(row));
  return absl::OkStatus();
}

void PaddedBatchStage::CountBatch(const Batch& b) {
  BatchingStage::CountBatch(b);
  data_cells_.Add(batch_data_cells_);
  padding_cells_.Add(batch_padding_cells_);
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

StageStats PaddedBatchStage::OwnStats() const {
  const double all = static_cast<double>(data_cells_.Get() + padding_cells_.Get());
  return BatchStats(
      {{"padding_fraction", all > 0 ? static_cast<double>(padding_cells_.Get()) / all : 0.0}});
}

}  // namespace dataecho
