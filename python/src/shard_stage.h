// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/shard_stage.h: keep every world_size-th element, from `rank` on.
//
// How Pipeline.shard() splits a stream between the workers of a job when the
// source cannot split its files (one IDX file pair, in-memory arrays): worker
// `rank` of `world_size` keeps elements rank, rank + world_size, ... of the
// stream, so every element goes to exactly one worker. Each worker still reads
// the whole stream; a file source splits its file list instead
// (from_tfrecord(..., rank=, world_size=)), which reads only its own files.
//
//   auto mine = ShardStage<Example>::Make(std::move(examples), {.rank = 1, .world_size = 4});
//
// It starts over with its input (Restart: epochs) and saves its position in
// the stream (checkpoints); it passes elements through unchanged, so a later
// stage's references to them are its input's.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_PYTHON_SRC_SHARD_STAGE_H_
#define DATAECHO_PYTHON_SRC_SHARD_STAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/sharding.h"
#include "fmt/format.h"

namespace dataecho::python {

template <typename T>
class ShardStage final : public PassThroughStage<T> {
 public:
  // `shard` as ResolveShard() returns it.
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, const Shard& shard) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, "shard"));
    if (shard.world_size < 1 || shard.rank < 0 || shard.rank >= shard.world_size) {
      return absl::InvalidArgumentError(
          fmt::format("shard rank must be in [0, world_size), got rank {} of {}", shard.rank,
                      shard.world_size));
    }
    return StagePtr<T>(new ShardStage(std::move(input), shard));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    while (true) {
      if (this->cancelled()) return CancelledError();
      absl::StatusOr<std::optional<T>> r = this->input().Next();
      if (!r.ok() || !r->has_value()) return r;
      const int64_t position = position_++;
      if (position % shard_.world_size == shard_.rank) {
        kept_.Add(1);
        return r;
      }
    }
  }

 protected:
  // State (stage.h's shape): the position in the input's stream.
  std::string StateName() const override { return "shard"; }
  uint64_t StateOptionsHash() const override {
    return OptionsHash().Add(int64_t{shard_.rank}).Add(int64_t{shard_.world_size}).value();
  }
  absl::Status SaveOwn(StateWriter& w) override {
    w.I64(position_);
    return absl::OkStatus();
  }
  absl::Status RestoreOwn(StateReader& r) override {
    const int64_t position = r.I64();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (position < 0) {
      return absl::DataLossError(absl::StrCat("pipeline state: shard at position ", position));
    }
    position_ = position;
    return absl::OkStatus();
  }
  absl::Status OnRestart(uint32_t /*epoch*/) override {
    position_ = 0;
    return absl::OkStatus();
  }

  StageStats OwnStats() const override {
    StageStats s;
    s.name = "shard";
    s.elements = kept_.Get();
    s.extra = {{"rank", shard_.rank}, {"world_size", shard_.world_size}};
    return s;
  }

 private:
  ShardStage(StagePtr<T> input, Shard shard)
      : PassThroughStage<T>(std::move(input)), shard_(std::move(shard)) {}

  const Shard shard_;
  int64_t position_ = 0;  // consumer thread only
  internal::Counter kept_;
};

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_SHARD_STAGE_H_
