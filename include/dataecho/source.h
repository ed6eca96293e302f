// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// source.h: in-memory sources and the Take / Repeat stages.
//
// Sources start a pipeline. These produce elements from memory; file and
// object-store sources live in the record-format headers.
//
//   auto numbers = dataecho::RangeSource(0, 100);              // 0..99
//   auto items   = dataecho::VectorSource(std::move(examples));  // elements in order
//   auto gen     = dataecho::GeneratorSource<int>(
//       [i = 0]() mutable -> absl::StatusOr<std::optional<int>> {
//         if (i == 10) return std::nullopt;                      // end of stream
//         return i++;
//       });
//   auto first5  = dataecho::TakeStage<int>::Make(*std::move(gen), 5);
//   // Three passes (epochs 0, 1, 2) over a stage that can start over:
//   auto epochs  = dataecho::RepeatStage<int64_t>::Make(*dataecho::RangeSource(0, 10), 3);
//   // ... or over a source re-created by a factory for every epoch:
//   auto again   = dataecho::RepeatSource<int64_t>([] { return dataecho::RangeSource(0, 10); }, 3);
//
// EPOCHS. A Repeat stage numbers its passes: the elements of the k-th pass
// carry epoch k (Example::epoch, Record::epoch, Batch::epoch; through
// ElementTraits<T>::SetEpoch). Stages below it start over through
// Stage::Restart(k) (stage.h) and fold k into their seeds; stages above it
// read the epoch from the elements: augmenters (augment.h), Echo's draws and
// Shuffle. So every epoch gets its own crops, echo draws, shuffle order and,
// for record sources, file order, and the same seed and epoch give the same
// ones. Epoch 0 is what the pipeline without Repeat gives. An empty pass ends
// the Repeat (so `-1` over an empty source cannot spin). Nested Repeats
// number their passes consecutively: an outer pass starts at the epoch after
// the last one the inner Repeat emitted.
//
// Like every stage factory these return absl::StatusOr<StagePtr<T>>:
// INVALID_ARGUMENT for a range step <= 0, an empty function or a null input;
// RepeatStage over an input that cannot start over returns its
// EnableRestart() error (UNIMPLEMENTED, naming the stage). (The builder's
// FromRange(), FromVector(), FromGenerator() and .Repeat() in pipeline.h wrap
// them.)
//
// Stats: elements and bytes emitted, over the pipeline's whole life (all
// epochs); input_wait = time blocked on an input that had nothing ready;
// the repeat row's extra "epochs_started". RepeatSource adds up the rows of
// the sources it made, epoch after epoch.
//
// Thread safety: as for every stage (stage.h). A generator function and a
// Repeat factory are only ever called from the consumer's thread, one call at
// a time.
#ifndef DATAECHO_SOURCE_H_
#define DATAECHO_SOURCE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho {
namespace internal {

// Base for sources: no input, counts what it emits, stamps the epoch it was
// restarted for (stage.h) on its elements, honours Cancel().
template <typename T>
class SourceStage : public Stage<T> {
 public:
  explicit SourceStage(std::string name) : name_(std::move(name)) {}
  void Cancel() override { cancelled_.store(true, std::memory_order_relaxed); }
  void AppendStats(std::vector<StageStats>* out) const override {
    StageStats s;
    s.name = name_;
    s.elements = elements_.Get();
    s.bytes = bytes_.Get();
    out->push_back(std::move(s));
  }

 protected:
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  void Count(T& v) {
    if (epoch_ != 0) RaiseEpoch(v, epoch_);
    elements_.Add(1);
    bytes_.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(v)));
  }
  void set_epoch(uint32_t epoch) { epoch_ = epoch; }

 private:
  std::string name_;
  std::atomic<bool> cancelled_{false};
  uint32_t epoch_ = 0;  // consumer thread only
  Counter elements_, bytes_;
};

}  // namespace internal

// Emits the elements of a vector in order (moved out, one by one; copies once
// a Repeat will restart it, so that every epoch has them).
template <typename T>
class VectorSourceStage final : public internal::SourceStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(std::vector<T> items) {
    return StagePtr<T>(new VectorSourceStage(std::move(items)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (pos_ == items_.size()) return std::nullopt;
    T v = Take(items_[pos_]);
    ++pos_;
    this->Count(v);
    return v;
  }

  absl::Status EnableRestart() override {
    if constexpr (!std::is_copy_constructible_v<T>) return this->CannotRestart();
    if (pos_ > 0 && !keep_) {
      return absl::FailedPreconditionError("vector source: items were already moved out");
    }
    keep_ = true;
    return absl::OkStatus();
  }
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(EnableRestart());
    pos_ = 0;
    this->set_epoch(epoch);
    return absl::OkStatus();
  }

 private:
  explicit VectorSourceStage(std::vector<T> items)
      : internal::SourceStage<T>("vector"), items_(std::move(items)) {}

  T Take(T& item) {
    if constexpr (std::is_copy_constructible_v<T>) {
      if (keep_) return item;
    }
    return std::move(item);
  }

  std::vector<T> items_;
  size_t pos_ = 0;
  bool keep_ = false;  // copy items out instead of moving them (restartable)
};

template <typename T>
absl::StatusOr<StagePtr<T>> VectorSource(std::vector<T> items) {
  return VectorSourceStage<T>::Make(std::move(items));
}

// Calls `fn` for each element; fn returns an element, std::nullopt at the end,
// or an error (after which the stage stays failed). It cannot start over
// (Restart() is UNIMPLEMENTED): repeat it with RepeatSource and a factory.
template <typename T>
class GeneratorSourceStage final : public internal::SourceStage<T> {
 public:
  using Fn = std::function<absl::StatusOr<std::optional<T>>()>;
  static absl::StatusOr<StagePtr<T>> Make(Fn fn) {
    if (!fn) return absl::InvalidArgumentError("generator: empty fn");
    return StagePtr<T>(new GeneratorSourceStage(std::move(fn)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (!status_.ok()) return status_;
    if (done_) return std::nullopt;
    absl::StatusOr<std::optional<T>> r = fn_();
    if (!r.ok()) {
      status_ = r.status();
    } else if (!r->has_value()) {
      done_ = true;
    } else {
      this->Count(**r);
    }
    return r;
  }

 private:
  explicit GeneratorSourceStage(Fn fn)
      : internal::SourceStage<T>("generator"), fn_(std::move(fn)) {}

  Fn fn_;
  absl::Status status_;
  bool done_ = false;
};

template <typename T>
absl::StatusOr<StagePtr<T>> GeneratorSource(typename GeneratorSourceStage<T>::Fn fn) {
  return GeneratorSourceStage<T>::Make(std::move(fn));
}

// Integers begin, begin + step, ... below end. REQUIRES: step >= 1.
class RangeSourceStage final : public internal::SourceStage<int64_t> {
 public:
  static absl::StatusOr<StagePtr<int64_t>> Make(int64_t begin, int64_t end, int64_t step) {
    if (step < 1) {
      return absl::InvalidArgumentError(absl::StrCat("range step must be >= 1, got ", step));
    }
    return StagePtr<int64_t>(new RangeSourceStage(begin, end, step));
  }

  absl::StatusOr<std::optional<int64_t>> Next() override {
    if (cancelled()) return CancelledError();
    if (next_ >= end_) return std::nullopt;
    int64_t v = next_;
    next_ += step_;
    Count(v);
    return v;
  }

  absl::Status EnableRestart() override { return absl::OkStatus(); }
  absl::Status Restart(uint32_t /*epoch*/) override {
    next_ = begin_;
    return absl::OkStatus();
  }

 private:
  RangeSourceStage(int64_t begin, int64_t end, int64_t step)
      : internal::SourceStage<int64_t>("range"),
        begin_(begin),
        next_(begin),
        end_(end),
        step_(step) {}

  int64_t begin_, next_, end_, step_;
};

inline absl::StatusOr<StagePtr<int64_t>> RangeSource(int64_t begin, int64_t end, int64_t step = 1) {
  return RangeSourceStage::Make(begin, end, step);
}

// The first `n` elements of its input (all of them if n < 0); the first `n`
// of every epoch when repeated.
template <typename T>
class TakeStage final : public UnaryStage<T, T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, int64_t n) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, "take"));
    return StagePtr<T>(new TakeStage(std::move(input), n));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (limit_ >= 0 && pass_taken_ >= limit_) return std::nullopt;
    absl::StatusOr<std::optional<T>> r;
    input_wait_ns_.Add(internal::PullTimed(this->input(), &r));
    Count(r);
    return r;
  }

  bool TryNext(absl::StatusOr<std::optional<T>>* out) override {
    if (this->cancelled() || (limit_ >= 0 && pass_taken_ >= limit_)) {
      *out = Next();
      return true;
    }
    if (!this->input().TryNext(out)) return false;
    Count(*out);
    return true;
  }

  absl::Status EnableRestart() override { return this->input().EnableRestart(); }
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(this->input().Restart(epoch));
    pass_taken_ = 0;
    return absl::OkStatus();
  }

 protected:
  StageStats OwnStats() const override {
    StageStats s;
    s.name = "take";
    s.elements = taken_.Get();
    s.bytes = bytes_.Get();
    s.input_wait = absl::Nanoseconds(input_wait_ns_.Get());
    return s;
  }

 private:
  TakeStage(StagePtr<T> input, int64_t n) : UnaryStage<T, T>(std::move(input)), limit_(n) {}

  void Count(const absl::StatusOr<std::optional<T>>& r) {
    if (!r.ok() || !r->has_value()) return;
    ++pass_taken_;
    taken_.Add(1);
    bytes_.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**r)));
  }

  const int64_t limit_;
  int64_t pass_taken_ = 0;  // this epoch (consumer thread only)
  internal::Counter taken_, bytes_, input_wait_ns_;
};

// Runs its input `epochs` times in a row (forever if epochs < 0), numbering
// the passes (see EPOCHS in the file comment). Two ways to get the next pass:
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

  // Factory mode: the source of epoch_.
  absl::Status MakeSource() {
    absl::StatusOr<StagePtr<T>> next = factory_();
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
};

// RepeatStage<T>::Make(factory, epochs): a new source for every epoch.
template <typename T>
absl::StatusOr<StagePtr<T>> RepeatSource(typename RepeatStage<T>::Factory factory, int64_t epochs) {
  return RepeatStage<T>::Make(std::move(factory), epochs);
}

}  // namespace dataecho

#endif  // DATAECHO_SOURCE_H_
