// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// interleave.h: read several inputs round-robin, tf.data's interleave.
//
// InterleaveStage maps each element of its input (a file name, a shard, a
// pipeline) to a pipeline of U with `fn`, keeps `cycle_length` of those open
// and takes `block_length` consecutive elements from each in turn. When one
// ends, the next input element opens a new one in its place (and is read at
// once); the stage ends when its input and every open pipeline have ended.
// The order depends only on the inputs, never on timing:
//
//   // Four files read round-robin, one record from each in turn:
//   auto records = dataecho::FromVector(files).Interleave(
//       [&](std::string f) { return dataecho::From(dataecho::MakeTFRecordSource(store, {f})); },
//       {.cycle_length = 4});
//   // Pipelines of the same type, two records from each in turn:
//   auto mixed = dataecho::Interleave(std::move(pipelines), {.cycle_length = 3, .block_length =
//   2});
//
// `fn` takes the input element and returns a Pipeline<U>, a StagePtr<U> or an
// absl::StatusOr<StagePtr<U>>. An error (from the input, from `fn`, from a
// pipeline that failed to build or from an open pipeline) comes out in order
// and stays.
//
// Interleave itself runs in the consumer's thread. Only the open pipelines
// have started (a pipeline's threads start on its first Next()), so
// `cycle_length` bounds the reads in flight; end each pipeline in a Prefetch
// to read them in parallel. The slots are made as inputs open, never
// `cycle_length` of them up front: a cycle_length above the number of inputs
// (even INT64_MAX) costs nothing and opens every input at once. (The record
// sources' own `cycle_length`, record_source.h, is a parallel interleave of
// files with reader threads.)
//
// Stats: the input's stages, then the interleave row: elements, bytes,
// input_wait (time blocked on an open pipeline or the input with nothing
// ready); extra
// "opened" (pipelines opened so far), "open" (open now). The open pipelines'
// own stages are not listed.
//
// Thread safety: as every stage (stage.h); `fn` is called from the consumer's
// thread.
#ifndef DATAECHO_INTERLEAVE_H_
#define DATAECHO_INTERLEAVE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

// (Not formats/record_source.h's InterleaveOptions, the options of a record
// source's parallel file readers.)
struct InterleaveStageOptions {
  // Pipelines open at a time. >= 1.
  int64_t cycle_length = 2;
  // Consecutive elements taken from one pipeline before moving to the next. >= 1.
  int64_t block_length = 1;
  // Name shown in stats.
  std::string name = "interleave";

  absl::Status Validate() const {
    if (cycle_length < 1 || block_length < 1) {
      return absl::InvalidArgumentError(
          fmt::format("{}: cycle_length and block_length must be >= 1, got {} and {}", name,
                      cycle_length, block_length));
    }
    return absl::OkStatus();
  }
};

template <typename T, typename U>
class InterleaveStage final : public UnaryStage<U, T> {
 public:
  using Fn = std::function<absl::StatusOr<StagePtr<U>>(T)>;

  // INVALID_ARGUMENT for a null input, an empty fn or a bad option.
  static absl::StatusOr<StagePtr<U>> Make(StagePtr<T> input, Fn fn,
                                          InterleaveStageOptions options) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
    DATAECHO_RETURN_IF_ERROR(options.Validate());
    if (!fn) return absl::InvalidArgumentError(fmt::format("{}: empty fn", options.name));
    return StagePtr<U>(new InterleaveStage(std::move(input), std::move(fn), std::move(options)));
  }

  absl::StatusOr<std::optional<U>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (!error_.ok()) return error_;
    absl::StatusOr<std::optional<U>> r = NextInCycle();
    if (!r.ok()) {
      error_ = r.status();
    } else if (r->has_value()) {
      totals_.elements.Add(1);
      totals_.bytes.Add(static_cast<int64_t>(ElementTraits<U>::ByteSize(**r)));
    }
    return r;
  }

 protected:
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    for (StagePtr<U>& s : cycle_) {
      if (s != nullptr) s->Cancel();
    }
  }

  StageStats OwnStats() const override {
    return totals_.Report(options_.name, {{"opened", static_cast<double>(opened_.Get())},
                                          {"open", static_cast<double>(open_.Get())}});
  }

 private:
  InterleaveStage(StagePtr<T> input, Fn fn, InterleaveStageOptions options)
      : UnaryStage<U, T>(std::move(input)), fn_(std::move(fn)), options_(std::move(options)) {}

  // tf.data's loop: read the current slot; at an empty slot open the next
  // input there (and read it at once); move on after a block or an end.
  // Slots past cycle_.size() are empty ones not made yet.
  absl::StatusOr<std::optional<U>> NextInCycle() {
    while (!input_done_ || open_.Get() > 0) {
      if (this->cancelled()) return CancelledError();
      if (index_ == cycle_.size()) {
        if (input_done_) {  // nothing left to open there: back to the first slot
          index_ = 0;
          continue;
        }
        absl::MutexLock lock(&mu_);
        cycle_.emplace_back();
      }
      StagePtr<U>& slot = cycle_[index_];
      if (slot != nullptr) {
        absl::StatusOr<std::optional<U>> r;
        totals_.input_wait_ns.Add(internal::PullTimed(*slot, &r));
        if (!r.ok()) return r;
        if (r->has_value()) {
          if (++in_block_ == options_.block_length) Advance();
          return r;
        }
        Replace(slot, nullptr);  // this pipeline ended
        Advance();
      } else if (!input_done_) {
        absl::StatusOr<std::optional<T>> next;
        totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &next));
        if (!next.ok()) return next.status();
        if (!next->has_value()) {
          input_done_ = true;
          continue;
        }
        absl::StatusOr<StagePtr<U>> opened = fn_(*std::move(*next));
        if (opened.ok() && *opened == nullptr) {
          opened = absl::InvalidArgumentError(options_.name + ": fn returned a null stage");
        }
        if (!opened.ok()) return opened.status();
        Replace(slot, *std::move(opened));
        opened_.Add(1);
      } else {
        Advance();
      }
    }
    return std::nullopt;
  }

  void Advance() {
    in_block_ = 0;
    if (++index_ == static_cast<uint64_t>(options_.cycle_length)) index_ = 0;
  }

  // Swaps a slot's pipeline under mu_ (Cancel() walks the slots from other
  // threads) and counts the open ones.
  void Replace(StagePtr<U>& slot, StagePtr<U> stage) {
    StagePtr<U> old;
    {
      absl::MutexLock lock(&mu_);
      open_.Add((stage != nullptr ? 1 : 0) - (slot != nullptr ? 1 : 0));
      old = std::exchange(slot, std::move(stage));
      if (slot != nullptr && this->cancelled()) slot->Cancel();  // raced with Cancel()
    }
    // `old` (an ended pipeline) is destroyed here, outside the lock.
  }

  Fn fn_;
  const InterleaveStageOptions options_;
  absl::Mutex mu_;
  // The open pipelines (at most cycle_length slots, made as inputs open).
  // Written by the consumer thread under mu_, read by it without the lock;
  // Cancel() reads them under mu_.
  std::vector<StagePtr<U>> cycle_;
  size_t index_ = 0;         // consumer thread only
  int64_t in_block_ = 0;     // consumer thread only
  bool input_done_ = false;  // consumer thread only
  absl::Status error_;       // sticky (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter opened_, open_;
};

}  // namespace dataecho

#endif  // DATAECHO_INTERLEAVE_H_
