// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The part of BatchStage and PaddedBatchStage they share: the fill loop, the
// per-row columns, the state and the references
// (include/dataecho/internal/batching_stage.h, docs/checkpoint.md).
#include "dataecho/internal/batching_stage.h"

#include <algorithm>
#include <cstring>

#include "buffer_pool.h"
#include "dataecho/internal/element_refs.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho::internal {

BatchingStage::BatchingStage(StagePtr<Example> input, std::string name, int64_t batch_size,
                             bool drop_remainder, size_t alignment)
    : UnaryStage<Batch, Example>(std::move(input), Restarts::kWithInput),
      name_(std::move(name)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder),
      pool_(BufferPool::Create(alignment)) {}

BatchingStage::~BatchingStage() = default;

void BatchingStage::NoteRow(const Example& row, int64_t r) {
  if (r == 0) {
    fresh_ = 0;
    epoch_ = 0;
    rows_crc32c_ = 0;
    row_index_.clear();
    row_refs_.clear();
    // One allocation each, and none once emitted_ hands buffers back.
    row_index_.reserve(static_cast<size_t>(batch_size_));
    row_refs_.reserve(static_cast<size_t>(batch_size_));
  }
  row_index_.push_back(
      {row.label, static_cast<int64_t>(row.source_index), static_cast<int32_t>(row.repeat_index)});
  if (row.fresh()) ++fresh_;
  epoch_ = std::max(epoch_, row.epoch);
  rows_crc32c_ = FoldFingerprint(rows_crc32c_, row.record_crc32c);
  row_refs_.push_back({row.record_offset, row.epoch, row.record_crc32c});
}

absl::Status BatchingStage::GatherRows(absl::FunctionRef<Example*()> pull, int64_t* rows) {
  while (*rows < batch_size_) {
    Example* row = pull();
    if (row == nullptr) break;
    if (*rows == 0) {
      DATAECHO_RETURN_IF_ERROR(StartBatch(*row));
      components_ = row->components.size();
    } else if (row->components.size() != components_) {
      return absl::InvalidArgumentError(
          fmt::format("{}: example {} has {} components, the batch's first row has {}", name_,
                      row->source_index, row->components.size(), components_));
    }
    NoteRow(*row, *rows);
    DATAECHO_RETURN_IF_ERROR(AddRow(std::move(*row), *rows));
    ++*rows;
  }
  return absl::OkStatus();
}

absl::Status BatchingStage::MakeColumns(Batch* b) {
  const size_t rows = row_index_.size();
  MutableBuffer labels = pool_->Get(rows * sizeof(int64_t));
  MutableBuffer sources = pool_->Get(rows * sizeof(int64_t));
  MutableBuffer repeats = pool_->Get(rows * sizeof(int32_t));
  for (size_t r = 0; r < rows; ++r) {
    const RowIndex& row = row_index_[r];
    std::memcpy(labels.data() + r * sizeof(int64_t), &row.label, sizeof(row.label));
    std::memcpy(sources.data() + r * sizeof(int64_t), &row.source, sizeof(row.source));
    std::memcpy(repeats.data() + r * sizeof(int32_t), &row.repeat, sizeof(row.repeat));
  }
  const Shape shape = {static_cast<int64_t>(rows)};
  DATAECHO_ASSIGN_OR_RETURN(b->labels,
                            Tensor::Make(DType::kInt64, shape, std::move(labels).Freeze()));
  DATAECHO_ASSIGN_OR_RETURN(b->source_indices,
                            Tensor::Make(DType::kInt64, shape, std::move(sources).Freeze()));
  DATAECHO_ASSIGN_OR_RETURN(b->repeat_indices,
                            Tensor::Make(DType::kInt32, shape, std::move(repeats).Freeze()));
  return absl::OkStatus();
}

absl::StatusOr<Batch> BatchingStage::MakeBatch() {
  const auto rows = static_cast<int64_t>(row_index_.size());
  DATAECHO_ASSIGN_OR_RETURN(Batch b, FinishBatch(rows));
  b.num_rows = rows;
  b.fresh_rows = fresh_;
  b.epoch = epoch_;
  b.rows_crc32c = rows_crc32c_;
  // After the components: a batch refused by its size takes no buffer.
  DATAECHO_RETURN_IF_ERROR(MakeColumns(&b));
  std::vector<RowRef> spare;
  if (emitted_.size() == kReferencedBatches) {
    spare = std::move(emitted_.front().rows);  // reused for the next batch
    emitted_.pop_front();
  }
  emitted_.push_back({b.source_indices.buffer().data(), std::move(row_refs_)});
  row_refs_ = std::move(spare);
  row_refs_.clear();
  return b;
}

absl::StatusOr<std::optional<Batch>> BatchingStage::Next() {
  if (cancelled()) return CancelledError();
  if (!error_.ok()) return error_;
  if (done_) return std::nullopt;
  int64_t rows = 0;
  absl::StatusOr<std::optional<Example>> r;
  absl::Status s = FillRows(
      [this, &r]() -> Example* {
        input_wait_ns_.Add(PullTimed(input(), &r));
        if (!r.ok()) {
          error_ = r.status();
          return nullptr;
        }
        if (!r->has_value()) {
          done_ = true;
          return nullptr;
        }
        return &**r;
      },
      &rows);
  if (!s.ok()) {
    DropRows();
    return error_ = s;
  }
  if (rows == 0 || (rows < batch_size_ && drop_remainder_)) {
    DropRows();
    if (!error_.ok()) return error_;
    return std::nullopt;
  }
  absl::StatusOr<Batch> b = MakeBatch();
  if (!b.ok()) {
    DropRows();
    return error_ = b.status();
  }
  CountBatch(*b);
  return std::optional<Batch>(*std::move(b));
}

absl::Status BatchingStage::OnRestart(uint32_t /*epoch*/) {
  DropRows();
  done_ = false;
  return absl::OkStatus();
}

absl::Status BatchingStage::SaveOwn(StateWriter& w) {
  w.Bool(done_);
  return absl::OkStatus();
}

absl::Status BatchingStage::RestoreOwn(StateReader& r) {
  done_ = r.Bool();
  return r.status();
}

absl::Status BatchingStage::SaveRefs(std::span<const Batch* const> items, StateWriter& w) {
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
      return absl::FailedPreconditionError(fmt::format(
          "{} can reference only the last {} batches it emitted (a batch echo's); a Shuffle of "
          "batches cannot save its state",
          name_, kReferencedBatches));
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
  return input().SaveRefs(ElementPointers(rows), w);
}

absl::StatusOr<std::vector<uint64_t>> BatchingStage::ReadBatchSizes(StateReader& r, size_t n,
                                                                    uint64_t* total) const {
  std::vector<uint64_t> sizes(n);
  *total = 0;
  for (uint64_t& size : sizes) {
    size = r.U64();
    if (size == 0 || size > static_cast<uint64_t>(batch_size_)) {
      r.Fail(
          absl::DataLossError(fmt::format("pipeline state: {}: a batch of {} rows", name_, size)));
    }
    if (!r.status().ok()) return r.status();
    *total += size;
  }
  return sizes;
}

absl::Status BatchingStage::Reread(StateReader& r, size_t n, std::vector<Batch>* out) {
  uint64_t total = 0;
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<uint64_t> sizes, ReadBatchSizes(r, n, &total));
  std::vector<Example> rows;
  DATAECHO_RETURN_IF_ERROR(RereadElements(input(), r, total, &rows, name_ + ": batch rows"));
  // Made again as Next() made them; statistics are not part of the state.
  size_t next = 0;
  for (uint64_t size : sizes) {
    const size_t end = next + size;
    int64_t added = 0;
    absl::Status s =
        FillRows([&]() -> Example* { return next == end ? nullptr : &rows[next++]; }, &added);
    if (s.ok() && static_cast<uint64_t>(added) != size) {
      s = absl::DataLossError(
          fmt::format("pipeline state: {}: a batch larger than batch_size", name_));
    }
    absl::StatusOr<Batch> b = s.ok() ? MakeBatch() : absl::StatusOr<Batch>(s);
    if (!b.ok()) {
      DropRows();
      return b.status();
    }
    out->push_back(*std::move(b));
  }
  return absl::OkStatus();
}

void BatchingStage::CountBatch(const Batch& b) {
  batches_.Add(1);
  rows_out_.Add(b.num_rows);
  fresh_rows_.Add(b.fresh_rows);
  bytes_.Add(static_cast<int64_t>(b.ByteSize()));
}

StageStats BatchingStage::BatchStats(std::vector<std::pair<std::string, double>> extra) const {
  StageStats s;
  s.name = name_;
  s.elements = batches_.Get();
  s.bytes = bytes_.Get();
  s.input_wait = absl::Nanoseconds(input_wait_ns_.Get());
  s.extra = {{"rows", static_cast<double>(rows_out_.Get())},
             {"fresh_rows", static_cast<double>(fresh_rows_.Get())}};
  for (auto& e : extra) s.extra.push_back(std::move(e));
  s.extra.emplace_back("buffer_allocations", static_cast<double>(pool_->allocations()));
  return s;
}

}  // namespace dataecho::internal
