// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// unbatch.cc: UnbatchStage (include/dataecho/unbatch.h).
#include "dataecho/unbatch.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/dtype.h"
#include "dataecho/status_macros.h"
#include "dataecho/tensor.h"

namespace dataecho {

template class UnaryStage<Example, Batch>;

namespace {

// Value i of a column (memcpy: a Batch made by hand may hold unaligned slices).
template <typename T>
T At(const Tensor& column, int64_t i) {
  T v;
  std::memcpy(&v, column.buffer().data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

// OK if `column` is `dtype` [rows].
absl::Status CheckColumn(const Tensor& column, DType dtype, int64_t rows, const char* what) {
  if (column.dtype() != dtype || column.rank() != 1 || column.dim(0) != rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", std::string(DTypeName(column.dtype())), " ", ShapeString(column.shape()),
        ", not ", std::string(DTypeName(dtype)), " [", rows, "]"));
  }
  return absl::OkStatus();
}

// Row `r` of `b`, a well-formed batch (UnbatchStage::CheckBatch).
absl::StatusOr<Example> Row(const Batch& b, int64_t r) {
  Example e;
  for (const Tensor& c : b.components) {
    const size_t row_bytes = c.byte_size() / static_cast<size_t>(b.num_rows);
    DATAECHO_ASSIGN_OR_RETURN(
        Tensor t, Tensor::Make(c.dtype(), Shape(c.shape().begin() + 1, c.shape().end()),
                               c.buffer().Slice(static_cast<size_t>(r) * row_bytes, row_bytes)));
    e.components.push_back(std::move(t));
  }
  e.label = At<int64_t>(b.labels, r);
  e.source_index = static_cast<uint64_t>(At<int64_t>(b.source_indices, r));
  e.repeat_index =
      std::max(static_cast<uint32_t>(At<int32_t>(b.repeat_indices, r)), b.repeat_index);
  e.epoch = b.epoch;
  return e;
}

// The row of `b` that `e` is, or -1: the row its first component's bytes are
// (a row is a slice of the batch's buffers), or, for rows without components,
// the first row of its source and repeat index.
int64_t RowOf(const Batch& b, const Example& e) {
  if (b.num_rows <= 0) return -1;
  int64_t r = -1;
  if (!b.components.empty() && !e.components.empty()) {
    const Tensor& c = b.components[0];
    const size_t row_bytes = c.byte_size() / static_cast<size_t>(b.num_rows);
    const uint8_t* base = c.buffer().data();
    const uint8_t* at = e.components[0].buffer().data();
    if (row_bytes == 0 || at < base || at >= base + c.byte_size() ||
        static_cast<size_t>(at - base) % row_bytes != 0) {
      return -1;
    }
    r = static_cast<int64_t>(static_cast<size_t>(at - base) / row_bytes);
  } else {
    for (int64_t i = 0; i < b.num_rows && r < 0; ++i) {
      if (static_cast<uint64_t>(At<int64_t>(b.source_indices, i)) == e.source_index) r = i;
    }
  }
  if (r < 0 || static_cast<uint64_t>(At<int64_t>(b.source_indices, r)) != e.source_index) {
    return -1;
  }
  return r;
}

// True if `a` and `b` are the same batch (one read again: the same rows).
bool SameBatch(const Batch& a, const Batch& b) {
  return a.num_rows == b.num_rows && a.epoch == b.epoch && a.repeat_index == b.repeat_index &&
         a.rows_crc32c == b.rows_crc32c &&
         a.source_indices.buffer().view() == b.source_indices.buffer().view() &&
         a.repeat_indices.buffer().view() == b.repeat_indices.buffer().view();
}

}  // namespace

absl::StatusOr<StagePtr<Example>> UnbatchStage::Make(StagePtr<Batch> input,
                                                     UnbatchOptions options) {
  if (options.name.empty()) return absl::InvalidArgumentError("unbatch: empty name");
  DATAECHO_RETURN_IF_ERROR(CheckInput(input, options.name));
  return StagePtr<Example>(new UnbatchStage(std::move(input), std::move(options)));
}

UnbatchStage::UnbatchStage(StagePtr<Batch> input, UnbatchOptions options)
    : UnaryStage<Example, Batch>(std::move(input), Restarts::kWithInput),
      options_(std::move(options)) {}

absl::StatusOr<std::optional<Example>> UnbatchStage::Next() {
  absl::StatusOr<std::optional<Example>> out;
  Step(/*may_block=*/true, &out);
  return out;
}

bool UnbatchStage::TryNext(absl::StatusOr<std::optional<Example>>* out) {
  return Step(/*may_block=*/false, out);
}

bool UnbatchStage::Step(bool may_block, absl::StatusOr<std::optional<Example>>* out) {
  while (true) {
    if (cancelled()) {
      *out = CancelledError();
      return true;
    }
    if (!error_.ok()) {
      *out = error_;
      return true;
    }
    if (UnderWay()) {
      absl::StatusOr<Example> row = Row(held_.back(), row_);
      if (!row.ok()) {
        *out = error_ = row.status();
        return true;
      }
      ++row_;
      totals_.elements.Add(1);
      totals_.bytes.Add(static_cast<int64_t>(row->ByteSize()));
      *out = std::optional<Example>(*std::move(row));
      return true;
    }
    absl::StatusOr<std::optional<Batch>> in;
    if (may_block) {
      totals_.input_wait_ns.Add(PullTimed(input(), &in));
    } else if (!input().TryNext(&in)) {
      return false;
    }
    if (!in.ok()) {
      if (!cancelled()) error_ = in.status();
      *out = in.status();
      return true;
    }
    if (!in->has_value()) {
      *out = std::nullopt;
      return true;
    }
    const int64_t position = batches_.Get();
    batches_.Add(1);
    if (absl::Status s = CheckBatch(**in, position); !s.ok()) {
      *out = error_ = std::move(s);
      return true;
    }
    if ((*in)->num_rows == 0) continue;
    Hold(**std::move(in), 0);
  }
}

absl::Status UnbatchStage::CheckBatch(const Batch& b, int64_t position) const {
  auto bad = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.name, ": batch ", position, " (epoch ", b.epoch, "): ", s.message()));
  };
  const int64_t rows = b.num_rows;
  if (rows < 0) return bad(absl::InvalidArgumentError(absl::StrCat("num_rows is ", rows)));
  if (absl::Status s = CheckColumn(b.labels, DType::kInt64, rows, "labels"); !s.ok()) return bad(s);
  if (absl::Status s = CheckColumn(b.source_indices, DType::kInt64, rows, "source_indices");
      !s.ok()) {
    return bad(s);
  }
  if (absl::Status s = CheckColumn(b.repeat_indices, DType::kInt32, rows, "repeat_indices");
      !s.ok()) {
    return bad(s);
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (const int32_t k = At<int32_t>(b.repeat_indices, r); k < 0) {
      return bad(
          absl::InvalidArgumentError(absl::StrCat("repeat_indices[", r, "] is ", k, ", not >= 0")));
    }
  }
  for (size_t i = 0; i < b.components.size(); ++i) {
    const Tensor& c = b.components[i];
    if (c.rank() < 1 || c.dim(0) != rows) {
      return bad(absl::InvalidArgumentError(
          absl::StrCat("component ", i, " is ", std::string(DTypeName(c.dtype())), " ",
                       ShapeString(c.shape()), ", not [", rows, ", ...] (one row per batch row)")));
    }
  }
  return absl::OkStatus();
}

void UnbatchStage::Hold(Batch b, int64_t row) {
  if (held_.size() == kHeldBatches) held_.erase(held_.begin());
  held_.push_back(std::move(b));
  current_ = true;
  row_ = row;
}

absl::Status UnbatchStage::OnRestart(uint32_t /*epoch*/) {
  held_.clear();
  current_ = false;
  row_ = 0;
  return absl::OkStatus();
}

// The state: whether a batch is under way; if so its next row and the
// input's reference to it.
absl::Status UnbatchStage::SaveOwn(StateWriter& w) {
  w.Bool(UnderWay());
  if (!UnderWay()) return absl::OkStatus();
  w.I64(row_);
  const Batch* b = &held_.back();
  return input().SaveRefs(std::span<const Batch* const>(&b, 1), w);
}

absl::Status UnbatchStage::RestoreOwn(StateReader& r) {
  held_.clear();
  current_ = false;
  row_ = 0;
  if (!r.Bool()) return r.status();
  const int64_t row = r.I64();
  DATAECHO_RETURN_IF_ERROR(r.status());
  DATAECHO_ASSIGN_OR_RETURN(Batch again, RereadBatch(r));
  // Between two Next() calls a batch under way has emitted a row and has one left.
  if (row <= 0 || row >= again.num_rows) {
    return absl::DataLossError(absl::StrCat("pipeline state: ", options_.name, " at row ", row,
                                            " of a batch of ", again.num_rows));
  }
  Hold(std::move(again), row);
  return absl::OkStatus();
}

absl::StatusOr<Batch> UnbatchStage::RereadBatch(StateReader& r) {
  std::vector<Batch> again;
  DATAECHO_RETURN_IF_ERROR(input().Reread(r, 1, &again));
  if (again.size() != 1) {
    return absl::DataLossError(absl::StrCat("pipeline state: ", options_.name, ": ", again.size(),
                                            " batches read again, not 1"));
  }
  DATAECHO_RETURN_IF_ERROR(CheckBatch(again[0], batches_.Get()));
  return std::move(again[0]);
}

// A row's reference: its row in its batch, then the input's reference to the batch.
absl::Status UnbatchStage::SaveRefs(std::span<const Example* const> items, StateWriter& w) {
  for (const Example* e : items) {
    const Batch* from = nullptr;
    int64_t row = -1;
    for (auto b = held_.rbegin(); b != held_.rend() && row < 0; ++b) {
      row = RowOf(*b, *e);
      from = &*b;
    }
    if (row < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          options_.name, " can reference only the rows of the last ", kHeldBatches,
          " batches it read: a Shuffle after it cannot save its state; shuffle before batching"));
    }
    w.U64(static_cast<uint64_t>(row));
    DATAECHO_RETURN_IF_ERROR(input().SaveRefs(std::span<const Batch* const>(&from, 1), w));
  }
  return absl::OkStatus();
}

absl::Status UnbatchStage::Reread(StateReader& r, size_t n, std::vector<Example>* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t row = r.U64();
    DATAECHO_RETURN_IF_ERROR(r.status());
    DATAECHO_ASSIGN_OR_RETURN(Batch again, RereadBatch(r));
    if (row >= static_cast<uint64_t>(again.num_rows)) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", options_.name, ": row ", row,
                                              " of a batch of ", again.num_rows));
    }
    // Rows are sliced from a batch held (the current one, or one read again
    // for an earlier row), so that they can be referenced again.
    const Batch* from = nullptr;
    for (const Batch& b : held_) {
      if (SameBatch(b, again)) from = &b;
    }
    if (from == nullptr && held_.size() >= kHeldBatches) from = &again;  // not kept
    if (from == nullptr) {
      held_.insert(held_.begin(), std::move(again));  // older than the current, which stays last
      from = &held_.front();
    }
    DATAECHO_ASSIGN_OR_RETURN(Example e, Row(*from, static_cast<int64_t>(row)));
    out->push_back(std::move(e));
  }
  return absl::OkStatus();
}

StageStats UnbatchStage::OwnStats() const {
  return totals_.Report(options_.name, {{"batches", static_cast<double>(batches_.Get())}});
}

}  // namespace dataecho
