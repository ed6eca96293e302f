// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// repeat.h: epochs: run a stage chain several times, numbering the passes.
//
//   // Three passes (epochs 0, 1, 2) over a chain that can start over:
//   auto p = dataecho::FromVector(std::move(examples))
//                .Shuffle({.buffer_size = 10000, .seed = 1})  // a new order every epoch
//                .Repeat(3)                                    // RepeatStage<T>::Make(in, 3)
//                .Map(RandomCropAndFlip, {.parallelism = 0});  // new crops every epoch
//   // ... or over a source re-created by a factory for every epoch:
//   auto again = dataecho::RepeatSource<int64_t>([] { return dataecho::RangeSource(0, 10); }, 3);
//
// A Repeat stage numbers its passes: the elements of the k-th pass
// carry epoch k (Example::epoch, Record::epoch, Batch::epoch; through
// ElementTraits<T>::SetEpoch). Stages below it start over through
// Stage::Restart(k) (stage.h) and fold k into their seeds; stages above it
// read the epoch from the elements: augmenters (augment.h), Echo's draws and
// Shuffle. So every epoch gets its own crops, echo draws, shuffle order and,
// for record sources, file order, and the same seed and epoch give the same
// ones. Epoch 0 is what the pipeline without Repeat gives. An empty pass ends
// the Repeat (so `-1` over an empty source cannot spin). Nested Repeats
// number their passes consecutively: an outer pass starts at the epoch after
// the last one the inner Repeat emitted. Epochs are 32-bit: a pass that
// would follow epoch 2^32 - 1 is an error (OUT_OF_RANGE), not epoch 0 again.
//
// RepeatStage::Make over an input that cannot start over returns its
// EnableRestart() error (UNIMPLEMENTED, naming the stage: a generator, for
// example). A parallel Map or a Prefetch below a Repeat starts over (it stops
// its threads, drops what they made ahead, restarts its input), but the
// consumer then waits at every epoch end while their queues fill again: put
// Repeat right after the source, or after a Shuffle, where it can.
//
// Stats: the repeat row counts the elements and bytes it emitted, over all
// epochs, its input_wait (time blocked on an input that had nothing ready,
// stats.h) and "epochs_started"; the rows below it keep counting across
// epochs. RepeatSource adds up the rows of the sources it made, epoch after
// epoch (internal::AddStageStats).
//
// Thread safety: as for every stage (stage.h). A factory is only ever called
// from the consumer's thread, one call at a time.
#ifndef DATAECHO_REPEAT_H_
#define DATAECHO_REPEAT_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho {

// Runs its input `epochs` times in a row (forever if epochs < 0), numbering
// the passes (see the file comment). Two ways to get the next pass:
//
//   Make(input, epochs)    restarts `input` (Stage::Restart) at the end of
//                          each pass; the builder's .Repeat(epochs). The
//                          input must be able to start over (EnableRestart()
//                          is checked here).
//   Make(factory, epochs)  calls `factory` at the start of each epoch for a
//                          new source (a StagePtr<T>, or a factory's
//                          absl::StatusOr<StagePtr<T>>, so
//                          `[] { return RangeSource(0, 10); }` works) and
//                          tells it its epoch (Restart(e) on the new stage,
//                          when it can). The rows of the sources it made are
//                          added up in its stats.
//
// An error from the factory or from Restart() is returned by Next() and stays.
template <typename T>
class RepeatStage final : public Stage<T> {
 public:
  using Factory = std::function<absl::StatusOr<StagePtr<T>>()>;
  using Result = absl::StatusOr<std::optional<T>>;

  static absl::StatusOr<StagePtr<T>> Make(Factory factory, int64_t epochs,
                                          std::string name = "repeat") {
    if (!factory) return absl::InvalidArgumentError(absl::StrCat(name, ": empty factory"));
    return StagePtr<T>(new RepeatStage(std::move(factory), nullptr, epochs, std::move(name)));
  }
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, int64_t epochs,
                                          std::string name = "repeat") {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, name));
    DATAECHO_RETURN_IF_ERROR(input->EnableRestart());
    return StagePtr<T>(new RepeatStage(nullptr, std::move(input), epochs, std::move(name)));
  }

  Result Next() override {
    Result out;
    Step(/*may_block=*/true, &out);
    return out;
  }
  bool TryNext(Result* out) override { return Step(/*may_block=*/false, out); }

  void Cancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    absl::MutexLock lock(&mu_);
    if (current_ != nullptr) current_->Cancel();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    absl::MutexLock lock(&mu_);
    std::vector<StageStats> below = finished_;
    if (current_ != nullptr) {
      std::vector<StageStats> now;
      current_->AppendStats(&now);
      internal::AddStageStats(&below, now);
    }
    out->insert(out->end(), below.begin(), below.end());
    StageStats s = totals_.Report(name_, {{"epochs_started", static_cast<double>(started_.Get())}});
    out->push_back(std::move(s));
  }

  // State: the current input's state, then the pass and its counts (factory
  // mode: the restored source is made by the factory).
  absl::Status SaveState(StateWriter& w) override {
    if (!status_.ok()) return CannotSaveAfterError(name_, status_);
    // Factory mode between sources: a fresh source's state, so that the shape
    // is always the same.
    DATAECHO_ASSIGN_OR_RETURN(Stage<T> * in, Input());
    DATAECHO_RETURN_IF_ERROR(in->SaveState(w));
    w.BeginStage(name_, OptionsHash().Add(epochs_).Add(factory_ ? "factory" : "restart").value());
    w.Bool(current_ != nullptr);
    w.Bool(done_);
    w.I64(passes_);
    w.I64(pass_elements_);
    w.U64(epoch_);
    w.U64(max_seen_);
    return absl::OkStatus();
  }
  absl::Status RestoreState(StateReader& r) override {
    if (current_ == nullptr) DATAECHO_RETURN_IF_ERROR(MakeSource());
    DATAECHO_RETURN_IF_ERROR(current_->RestoreState(r));
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(name_));
    const bool has_current = r.Bool();
    done_ = r.Bool();
    passes_ = r.I64();
    pass_elements_ = r.I64();
    epoch_ = static_cast<uint32_t>(r.U64());
    max_seen_ = static_cast<uint32_t>(r.U64());
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (passes_ < 0 || pass_elements_ < 0 || (epochs_ >= 0 && passes_ > epochs_)) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", name_, " at pass ", passes_, " of ", epochs_));
    }
    if (!has_current && factory_) DropCurrent();
    return absl::OkStatus();
  }
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    DATAECHO_ASSIGN_OR_RETURN(Stage<T> * in, Input());
    return in->SaveRefs(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    DATAECHO_ASSIGN_OR_RETURN(Stage<T> * in, Input());
    return in->Reread(r, n, out);
  }

  absl::Status EnableRestart() override { return absl::OkStatus(); }
  absl::Status Restart(uint32_t epoch) override {
    if (factory_) {
      DropCurrent();  // the next Next() makes the source of `epoch`
    } else {
      DATAECHO_RETURN_IF_ERROR(current_->Restart(epoch));
      started_.Add(1);
    }
    epoch_ = max_seen_ = epoch;
    passes_ = factory_ ? 0 : 1;
    pass_elements_ = 0;
    done_ = false;
    return absl::OkStatus();
  }

 private:
  RepeatStage(Factory factory, StagePtr<T> input, int64_t epochs, std::string name)
      : factory_(std::move(factory)),
        epochs_(epochs),
        name_(std::move(name)),
        current_(std::move(input)) {
    if (current_ != nullptr) {
      passes_ = 1;
      started_.Add(1);
    }
    done_ = epochs_ == 0;
  }

  // One request; false if it would block and !may_block.
  bool Step(bool may_block, Result* out) {
    while (true) {
      if (cancelled_.load(std::memory_order_relaxed)) {
        *out = CancelledError();
        return true;
      }
      if (!status_.ok()) {
        *out = status_;
        return true;
      }
      if (done_) {
        *out = std::nullopt;
        return true;
      }
      if (current_ == nullptr) {
        status_ = MakeSource();
        continue;
      }
      Result r;
      if (may_block) {
        totals_.input_wait_ns.Add(internal::PullTimed(*current_, &r));
      } else if (!current_->TryNext(&r)) {
        return false;
      }
      if (!r.ok()) {
        if (!cancelled_.load(std::memory_order_relaxed)) status_ = r.status();
        *out = std::move(r);
        return true;
      }
      if (r->has_value()) {
        max_seen_ = std::max({max_seen_, epoch_, internal::RaiseEpoch(**r, epoch_)});
        ++pass_elements_;
        totals_.elements.Add(1);
        totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**r)));
        *out = std::move(r);
        return true;
      }
      // The end of a pass.
      if ((epochs_ >= 0 && passes_ >= epochs_) || pass_elements_ == 0) {
        done_ = true;
        continue;
      }
      if (max_seen_ == UINT32_MAX) {  // epochs are 32-bit: no wrap to epoch 0's draws
        status_ = absl::OutOfRangeError(
            absl::StrCat(name_, ": no epoch after ", max_seen_, " (epochs are 32-bit numbers)"));
        continue;
      }
      epoch_ = max_seen_ + 1;
      pass_elements_ = 0;
      if (factory_) {
        DropCurrent();
      } else {
        ++passes_;
        started_.Add(1);
        status_ = current_->Restart(epoch_);
      }
    }
  }

  // The input to reference elements through (factory mode, between sources:
  // a source made for the purpose).
  absl::StatusOr<Stage<T>*> Input() {
    if (current_ == nullptr && factory_) {
      if (spare_ == nullptr) {
        DATAECHO_ASSIGN_OR_RETURN(spare_, factory_());
        if (spare_ == nullptr) return absl::InvalidArgumentError(name_ + ": null stage");
      }
      return spare_.get();
    }
    if (current_ == nullptr) return absl::FailedPreconditionError(name_ + ": no input");
    return current_.get();
  }

  // Factory mode: the source of epoch_. A spare the factory made for a state
  // (Input()) is that source: so each call of the factory is one pass, also
  // when states are saved between passes (a Prefetch above saves often).
  absl::Status MakeSource() {
    absl::StatusOr<StagePtr<T>> next =
        spare_ != nullptr ? absl::StatusOr<StagePtr<T>>(std::move(spare_)) : factory_();
    if (next.ok() && *next == nullptr) {
      next = absl::InvalidArgumentError(absl::StrCat(name_, ": the factory returned a null stage"));
    }
    if (!next.ok()) return next.status();
    if (epoch_ > 0) {
      absl::Status s = (*next)->Restart(epoch_);
      if (!s.ok() && !absl::IsUnimplemented(s)) return s;
    }
    ++passes_;
    started_.Add(1);
    absl::MutexLock lock(&mu_);
    current_ = *std::move(next);
    if (cancelled_.load(std::memory_order_relaxed)) current_->Cancel();  // raced with Cancel()
    return absl::OkStatus();
  }

  // Factory mode: keeps the finished source's stats and destroys it.
  void DropCurrent() {
    StagePtr<T> old;
    {
      absl::MutexLock lock(&mu_);
      if (current_ == nullptr) return;
      std::vector<StageStats> last;
      current_->AppendStats(&last);
      internal::AddStageStats(&finished_, last);
      old = std::move(current_);
    }
  }

  const Factory factory_;  // empty: restart current_
  const int64_t epochs_;
  const std::string name_;
  absl::Status status_;  // the factory's, Restart()'s or the input's error: sticky
  bool done_ = false;
  int64_t passes_ = 0;         // passes started since the last Restart()
  int64_t pass_elements_ = 0;  // elements of the current pass
  uint32_t epoch_ = 0;         // epoch of the current pass
  uint32_t max_seen_ = 0;      // newest epoch emitted
  std::atomic<bool> cancelled_{false};
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter started_;  // passes started, over the stage's life
  mutable absl::Mutex mu_;
  // The rows of the sources finished so far (factory mode).
  std::vector<StageStats> finished_ ABSL_GUARDED_BY(mu_);
  // Written only by the consumer thread under mu_; read by it without the lock.
  StagePtr<T> current_;
  // Factory mode, between passes: the next pass's source, made early to save
  // a state or read elements again (Reread); MakeSource() takes it.
  StagePtr<T> spare_;
};

// RepeatStage<T>::Make(factory, epochs): a new source for every epoch.
template <typename T>
absl::StatusOr<StagePtr<T>> RepeatSource(typename RepeatStage<T>::Factory factory, int64_t epochs) {
  return RepeatStage<T>::Make(std::move(factory), epochs);
}

// Compiled once, in src/repeat.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(RepeatStage);

}  // namespace dataecho

#endif  // DATAECHO_REPEAT_H_
