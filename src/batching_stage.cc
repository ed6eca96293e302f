// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The part of BatchStage and PaddedBatchStage they share
// (include/dataecho/internal/batching_stage.h).
#include "dataecho/internal/batching_stage.h"

#include "fmt/format.h"

namespace dataecho::internal {

absl::Status BatchingStage::OnRestart(uint32_t /*epoch*/) {
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
  return s;
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

}  // namespace dataecho::internal
