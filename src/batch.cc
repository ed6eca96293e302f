// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/batch.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "buffer_pool.h"
#include "dataecho/memory.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "internal/fork_join.h"
#include "internal/row_chunks.h"
#include "row_convert.h"

namespace dataecho {
namespace {

// Without a row pool, a row's bytes are asked for when it arrives and it is
// copied kLagRows rows later (internal::PrefetchRowBytes): in a shuffled
// buffer the row's first bytes are a cache miss (docs/benchmarks.md,
// "Prefetching rows"). Only kLagRows rows are held meanwhile, not the batch's.
constexpr size_t kLagRows = internal::kPrefetchRowsAhead;

// With a row pool, the rows are converted in chunks of about this many output
// bytes (internal::RowChunks), rounded to whole cache lines of the output:
// large enough that a chunk's hand-off costs nothing beside it, small enough
// that the last chunk leaves little to wait for.
constexpr size_t kChunkBytes = 256 << 10;
constexpr size_t kLineBytes = 64;

}  // namespace

absl::Status BatchOptions::Validate() const {
  if (batch_size < 1)
    return absl::InvalidArgumentError(fmt::format("batch_size must be >= 1, got {}", batch_size));
  if (batch_size > kMaxBatchSize) {
    return absl::InvalidArgumentError(
        fmt::format("batch_size must be at most {} (BatchOptions::kMaxBatchSize), got {}",
                    kMaxBatchSize, batch_size));
  }
  if (max_bytes < 0)
    return absl::InvalidArgumentError(
        fmt::format("batch max_bytes must be >= 0, got {}", max_bytes));
  if (cast.has_value() && !IsFloatDType(*cast)) {
    return absl::InvalidArgumentError(
        fmt::format("batch cast must be float32, float16 or bfloat16, got {}", DTypeName(*cast)));
  }
  const bool normalizes = scale != 1.0f || !mean.empty() || !stddev.empty();
  if (normalizes && !cast.has_value())
    return absl::InvalidArgumentError("batch normalization requires a cast");
  if (!mean.empty() && !stddev.empty() && mean.size() != stddev.size() && mean.size() != 1 &&
      stddev.size() != 1) {
    return absl::InvalidArgumentError(
        "batch mean and stddev must have the same number of channels");
  }
  for (float s : stddev) {
    if (!(s > 0))
      return absl::InvalidArgumentError(fmt::format("batch stddev must be > 0, got {}", s));
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError("batch alignment must be a power of two");
  }
  if (threads < 1 || threads > 64) {
    return absl::InvalidArgumentError(
        fmt::format("batch threads must be in 1..64, got {}", threads));
  }
  if (parallel_min_rows < 1) {
    return absl::InvalidArgumentError(
        fmt::format("batch parallel_min_rows must be >= 1, got {}", parallel_min_rows));
  }
  return absl::OkStatus();
}

// Storage for one row that the gathering thread constructs and the
// converting thread destroys: neither writes the slot the other last wrote
// (a destructor only reads it), so a slot costs no cache line moved back
// from the other core, as resetting it to an empty Example did.
union BatchStage::PendingRow {
  PendingRow() {}
  ~PendingRow() {}
  Example row;
};

struct BatchStage::Layout {
  struct Component {
    DType in = DType::kUInt8;
    DType out = DType::kUInt8;
    Shape shape;  // of one row
    int64_t elements = 0;
    size_t in_bytes = 0;
    size_t out_bytes = 0;
    int64_t channels = 1;
    std::vector<float> a, b;  // per-channel affine of the normalization
    MutableBuffer data;
  };
  absl::InlinedVector<Component, 1> components;
};

BatchStage::BatchStage(StagePtr<Example> input, BatchOptions options)
    : BatchingStage(std::move(input), options.name, options.batch_size, options.drop_remainder,
                    options.alignment),
      options_(std::move(options)),
      layout_(std::make_unique<Layout>()) {
  if (options_.threads > 1 && options_.batch_size >= options_.parallel_min_rows) {
    row_pool_ = std::make_unique<internal::ForkJoin>(options_.threads);
    chunks_ = std::make_unique<internal::RowChunks>();
    pending_ = std::make_unique<PendingRow[]>(static_cast<size_t>(options_.batch_size));
  } else {
    lagged_.resize(kLagRows);
  }
}

BatchStage::~BatchStage() = default;

absl::StatusOr<StagePtr<Batch>> BatchStage::Make(StagePtr<Example> input, BatchOptions options) {
  DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
  DATAECHO_RETURN_IF_ERROR(options.Validate());
  DATAECHO_RETURN_IF_ERROR(CheckMemoryEstimate(options.name, "batch_size", options.batch_size,
                                               BatchOptions::kIndexBytesPerRow, options.max_bytes,
                                               "BatchOptions::max_bytes"));
  return StagePtr<Batch>(new BatchStage(std::move(input), std::move(options)));
}

absl::Status BatchStage::StartBatch(const Example& first) {
  Layout& l = *layout_;
  const size_t n = static_cast<size_t>(options_.batch_size);
  // The whole batch against the cap, before any buffer is taken.
  int64_t row_bytes = BatchOptions::kIndexBytesPerRow;
  for (const Tensor& t : first.components) {
    const int64_t out =
        t.num_elements() * static_cast<int64_t>(DTypeSize(options_.cast.value_or(t.dtype())));
    if (__builtin_add_overflow(row_bytes, out, &row_bytes)) row_bytes = INT64_MAX;
  }
  DATAECHO_RETURN_IF_ERROR(CheckMemoryEstimate(options_.name, "batch_size", options_.batch_size,
                                               row_bytes, options_.max_bytes,
                                               "BatchOptions::max_bytes"));
  l.components.resize(first.components.size());
  for (size_t i = 0; i < first.components.size(); ++i) {
    const Tensor& t = first.components[i];
    Layout::Component& c = l.components[i];
    c.in = t.dtype();
    c.out = options_.cast.value_or(t.dtype());
    c.shape = t.shape();
    c.elements = t.num_elements();
    c.in_bytes = t.byte_size();
    c.out_bytes = static_cast<size_t>(c.elements) * DTypeSize(c.out);
    c.channels = 1;
    const size_t nm = options_.mean.size(), ns = options_.stddev.size();
    if ((nm > 1 || ns > 1) && t.rank() > 0) c.channels = t.shape().back();
    const size_t want = static_cast<size_t>(c.channels);
    if ((nm > 1 && nm != want) || (ns > 1 && ns != want)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: component {} has {} channels but mean/stddev have {}/{}", options_.name,
                      i, want, nm, ns));
    }
    c.a.assign(want, options_.scale);
    c.b.assign(want, 0.0f);
    for (size_t ch = 0; ch < want; ++ch) {
      const float mean = nm == 0 ? 0.0f : options_.mean[nm == 1 ? 0 : ch];
      const float sd = ns == 0 ? 1.0f : options_.stddev[ns == 1 ? 0 : ch];
      c.a[ch] = options_.scale / sd;
      c.b[ch] = -mean / sd;
    }
    c.data = pool().Get(c.out_bytes * n);
  }
  if (chunks_ != nullptr) {
    // Chunks end on a cache line of every component's buffer (at the
    // default alignment of 64): two threads never write one line.
    size_t out_row_bytes = 0;
    size_t line_rows = 1;
    for (const Layout::Component& c : l.components) {
      out_row_bytes += c.out_bytes;
      line_rows = std::max(line_rows, kLineBytes / std::gcd(c.out_bytes, kLineBytes));
    }
    chunk_rows_ = std::max<size_t>(kChunkBytes / std::max<size_t>(out_row_bytes, 1), 1);
    chunk_rows_ = (chunk_rows_ + line_rows - 1) / line_rows * line_rows;
    chunks_->SetChunkRows(chunk_rows_);
  }
  return absl::OkStatus();
}

absl::Status BatchStage::AddRow(Example&& row, int64_t row_index) {
  Layout& l = *layout_;
  for (size_t i = 0; i < l.components.size(); ++i) {
    const Tensor& t = row.components[i];
    const Layout::Component& c = l.components[i];
    if (t.dtype() != c.in || t.shape() != c.shape) {
      return absl::InvalidArgumentError(
          fmt::format("{}: example {} component {} is {}{}, the batch's first row has {}{}",
                      options_.name, row.source_index, i, DTypeName(t.dtype()),
                      ShapeString(t.shape()), DTypeName(c.in), ShapeString(c.shape)));
    }
  }
  const auto r = static_cast<size_t>(row_index);
  // The row's bytes are asked for as it arrives, on either path: the copy
  // finds them in the cache, and the next rows' reference counts, where the
  // upstream keeps rows one after the other, come with them.
  for (const Tensor& t : row.components) {
    internal::PrefetchRowBytes(t.buffer().data(), t.buffer().size());
  }
  // A slot is released, then built in place: an assignment of an Example
  // goes through its components one by one, a construction does not.
  if (chunks_ != nullptr) {  // converted and destroyed by ConvertChunks()
    std::construct_at(&pending_[r].row, std::move(row));
    if ((r + 1) % chunk_rows_ == 0) chunks_->Publish(r + 1);
    return absl::OkStatus();
  }
  Example& slot = lagged_[r % kLagRows];
  if (r >= kLagRows) CopyRow(slot, r - kLagRows);
  std::destroy_at(&slot);
  std::construct_at(&slot, std::move(row));
  return absl::OkStatus();
}

void BatchStage::CopyRow(const Example& row, size_t r) {
  Layout& l = *layout_;
  for (size_t i = 0; i < l.components.size(); ++i) {
    const Tensor& t = row.components[i];
    Layout::Component& c = l.components[i];
    uint8_t* dst = c.data.data() + r * c.out_bytes;
    const uint8_t* src = t.buffer().data();
    if (!options_.cast.has_value()) {
      std::memcpy(dst, src, c.in_bytes);
    } else {
      AffineRow(src, c.in, static_cast<size_t>(c.elements), c.a, c.b, c.out, dst);
    }
  }
}

void BatchStage::ConvertChunks() {
  for (size_t begin, end; chunks_->Claim(&begin, &end);) {
    auto prefetch = [this](size_t r) {
      for (const Tensor& t : pending_[r].row.components) {
        internal::PrefetchRowBytes(t.buffer().data(), t.buffer().size());
      }
    };
    for (size_t r = begin; r < std::min(end, begin + kLagRows); ++r) prefetch(r);
    for (size_t r = begin; r < end; ++r) {
      if (r + kLagRows < end) prefetch(r + kLagRows);
      CopyRow(pending_[r].row, r);
      std::destroy_at(&pending_[r].row);  // released here, not on the gathering thread
    }
  }
}

absl::Status BatchStage::FillRows(absl::FunctionRef<Example*()> pull, int64_t* rows) {
  if (row_pool_ == nullptr) return GatherRows(pull, rows);
  // The calling thread gathers the rows while the pool's other threads
  // convert the chunks already in place; then it converts chunks too.
  absl::Status status;
  chunks_->Reset();
  row_pool_->Run([&](int part, int /*parts*/) {
    if (part == 0) {
      status = GatherRows(pull, rows);
      chunks_->Close(static_cast<size_t>(*rows));
    }
    ConvertChunks();
  });
  return status;
}

absl::StatusOr<Batch> BatchStage::FinishBatch(int64_t num_rows) {
  Layout& l = *layout_;
  const auto rows = static_cast<size_t>(num_rows);
  if (chunks_ == nullptr) {  // the last rows AddRow() has not copied
    for (size_t r = rows > kLagRows ? rows - kLagRows : 0; r < rows; ++r) {
      CopyRow(lagged_[r % kLagRows], r);
      lagged_[r % kLagRows] = Example();
    }
  }
  Batch b;
  for (Layout::Component& c : l.components) {
    Shape shape;
    shape.push_back(num_rows);
    shape.insert(shape.end(), c.shape.begin(), c.shape.end());
    c.data.Truncate(rows * c.out_bytes);
    DATAECHO_ASSIGN_OR_RETURN(Tensor t,
                              Tensor::Make(c.out, std::move(shape), std::move(c.data).Freeze()));
    b.components.push_back(std::move(t));
  }
  return b;
}

void BatchStage::DropRows() {
  for (Example& row : lagged_) row = Example();
  // (pending_ is empty: FillRows() converts every row added, also on an error.)
}

uint64_t BatchStage::StateOptionsHash() const {
  return OptionsHash()
      .Add(options_.batch_size)
      .Add(static_cast<uint64_t>(options_.drop_remainder))
      .value();
}

StageStats BatchStage::OwnStats() const { return BatchStats({}); }

}  // namespace dataecho
