// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// source.h: in-memory sources and the Take stage.
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
//
// Epochs (Repeat, RepeatSource) are in repeat.h, which this header includes.
//
// Like every stage factory these return absl::StatusOr<StagePtr<T>>:
// INVALID_ARGUMENT for a range step <= 0, an empty function or a null input.
// (The builder's FromRange(), FromVector() and FromGenerator() in pipeline.h
// wrap them.) Vector and range sources can start over for a new epoch
// (Stage::Restart); a generator cannot.
//
// Stats: elements and bytes emitted, over the pipeline's whole life (all
// epochs); Take's input_wait = time blocked on an input that had nothing
// ready (stats.h).
//
// Thread safety: as for every stage (stage.h). A generator function is only
// ever called from the consumer's thread, one call at a time.
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

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/record.h"
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
  uint32_t epoch() const { return epoch_; }

 private:
  std::string name_;
  std::atomic<bool> cancelled_{false};
  uint32_t epoch_ = 0;  // consumer thread only
  Counter elements_, bytes_;
};

}  // namespace internal

// Emits the elements of a vector in order (moved out, one by one; copies once
// a Repeat will restart it, so that every epoch has them, and after a restore,
// when stages above may read an element again that the restore pulled anew).
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

  absl::Status SaveState(StateWriter& w) override {
    w.BeginStage("vector", OptionsHash().Add(static_cast<uint64_t>(items_.size())).value());
    w.U64(pos_);
    w.U64(this->epoch());
    w.Bool(keep_);
    return absl::OkStatus();
  }
  absl::Status RestoreState(StateReader& r) override {
    DATAECHO_RETURN_IF_ERROR(r.BeginStage("vector"));
    const uint64_t pos = r.U64();
    const uint64_t epoch = r.U64();
    const bool keep = r.Bool();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (pos > items_.size() || epoch > UINT32_MAX) {
      return absl::DataLossError(absl::StrCat("pipeline state: vector source position ", pos,
                                              " of ", items_.size(), " items"));
    }
    if (keep) DATAECHO_RETURN_IF_ERROR(EnableRestart());
    // A restore redoes the work that was in flight (a Prefetch above pulls
    // again what its consumer took after its last snapshot), and the stages
    // above it then read their buffered elements again (Reread), some of them
    // among those: from now on elements are copied out, never moved.
    copy_out_ = true;
    pos_ = pos;
    this->set_epoch(static_cast<uint32_t>(epoch));
    return absl::OkStatus();
  }
  // Self-named elements (Example) are referenced by (source_index, epoch):
  // their source_index must be unique in the vector.
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    if constexpr (internal::SelfNamed<T>) {
      for (const T* v : items) {
        w.U64(v->source_index);
        w.U64(v->epoch);
      }
      return absl::OkStatus();
    } else {
      return internal::SourceStage<T>::SaveRefs(items, w);
    }
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    if constexpr (internal::SelfNamed<T>) {
      if (by_index_.empty()) {
        for (size_t i = 0; i < items_.size(); ++i) {
          if (!by_index_.emplace(items_[i].source_index, i).second) {
            return absl::FailedPreconditionError(
                absl::StrCat("vector source: source_index ", items_[i].source_index,
                             " is not unique, so buffered elements cannot be referenced"));
          }
        }
      }
      for (size_t i = 0; i < n; ++i) {
        const uint64_t index = r.U64();
        const uint64_t epoch = r.U64();
        DATAECHO_RETURN_IF_ERROR(r.status());
        auto it = by_index_.find(index);
        if (it == by_index_.end()) {
          return absl::DataLossError(
              absl::StrCat("pipeline state: vector source has no element ", index));
        }
        T v = items_[it->second];
        v.epoch = static_cast<uint32_t>(epoch);
        out->push_back(std::move(v));
      }
      return absl::OkStatus();
    } else {
      return internal::SourceStage<T>::Reread(r, n, out);
    }
  }

 private:
  explicit VectorSourceStage(std::vector<T> items)
      : internal::SourceStage<T>("vector"), items_(std::move(items)) {}

  T Take(T& item) {
    if constexpr (std::is_copy_constructible_v<T>) {
      if (keep_ || copy_out_) return item;
    }
    return std::move(item);
  }

  std::vector<T> items_;
  size_t pos_ = 0;
  bool keep_ = false;      // copy items out instead of moving them (restartable)
  bool copy_out_ = false;  // copy them out: restored (Reread may ask for any)
  absl::flat_hash_map<uint64_t, size_t> by_index_;  // source_index -> position (Reread)
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

  // A generator's position is its function's own state: it cannot be saved
  // (UNIMPLEMENTED naming it, as soon as a state is built).
  absl::Status SaveState(StateWriter& /*w*/) override { return CannotSave(); }
  absl::Status RestoreState(StateReader& /*r*/) override { return CannotSave(); }

 private:
  static absl::Status CannotSave() {
    return absl::UnimplementedError(
        "generator cannot save or restore its state (its function's state is the caller's): use "
        "a vector, a range or a record source");
  }

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

// Integers begin, begin + step, ... below end. REQUIRES: step >= 1. The range
// ends when the next value would reach end or pass INT64_MAX (no wrap-around:
// FromRange(INT64_MAX - 1, INT64_MAX, 10) yields one value and ends).
class DATAECHO_EXPORT RangeSourceStage final : public internal::SourceStage<int64_t> {
 public:
  static absl::StatusOr<StagePtr<int64_t>> Make(int64_t begin, int64_t end, int64_t step);

  absl::StatusOr<std::optional<int64_t>> Next() override;
  absl::Status EnableRestart() override { return absl::OkStatus(); }
  absl::Status Restart(uint32_t /*epoch*/) override {
    next_ = begin_;
    return absl::OkStatus();
  }
  absl::Status SaveState(StateWriter& w) override;
  absl::Status RestoreState(StateReader& r) override;

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
class TakeStage final : public PassThroughStage<T> {
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
      internal::AssignInPlace(out, [&] { return Next(); });
      return true;
    }
    if (!this->input().TryNext(out)) return false;
    Count(*out);
    return true;
  }

 protected:
  // A pass-through stage (stage.h); its state is the count of this epoch.
  absl::Status OnRestart(uint32_t /*epoch*/) override {
    pass_taken_ = 0;
    return absl::OkStatus();
  }
  std::string StateName() const override { return "take"; }
  uint64_t StateOptionsHash() const override { return OptionsHash().Add(limit_).value(); }
  absl::Status SaveOwn(StateWriter& w) override {
    w.I64(pass_taken_);
    return absl::OkStatus();
  }
  absl::Status RestoreOwn(StateReader& r) override {
    pass_taken_ = r.I64();
    if (r.status().ok() && pass_taken_ < 0) {
      return absl::DataLossError(absl::StrCat("pipeline state: take at ", pass_taken_));
    }
    return r.status();
  }

  StageStats OwnStats() const override {
    StageStats s;
    s.name = "take";
    s.elements = taken_.Get();
    s.bytes = bytes_.Get();
    s.input_wait = absl::Nanoseconds(input_wait_ns_.Get());
    return s;
  }

 private:
  TakeStage(StagePtr<T> input, int64_t n) : PassThroughStage<T>(std::move(input)), limit_(n) {}

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

// Compiled once, in src/source.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(TakeStage);
extern template class DATAECHO_EXPORT VectorSourceStage<Example>;

}  // namespace dataecho

#include "dataecho/repeat.h"  // IWYU pragma: export (RepeatSource used to live here)

#endif  // DATAECHO_SOURCE_H_
