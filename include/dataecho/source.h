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
//   // Three passes over a source that can be re-created:
//   auto epochs  = dataecho::RepeatSource<int>([] { return dataecho::RangeSource(0, 10); }, 3);
//
// Like every stage factory these return absl::StatusOr<StagePtr<T>>:
// INVALID_ARGUMENT for a range step <= 0, an empty function or a null input.
// (The builder's FromRange(), FromVector() and FromGenerator() in pipeline.h
// wrap them.)
//
// Thread safety: as for every stage (stage.h). A generator function is only
// ever called from the consumer's thread, one call at a time.
#ifndef DATAECHO_SOURCE_H_
#define DATAECHO_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho {
namespace internal {

// Base for sources: no input, counts what it emits, honours Cancel().
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
  void Count(const T& v) {
    elements_.Add(1);
    bytes_.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(v)));
  }

 private:
  std::string name_;
  std::atomic<bool> cancelled_{false};
  Counter elements_, bytes_;
};

}  // namespace internal

// Emits the elements of a vector in order (moved out, one by one).
template <typename T>
class VectorSourceStage final : public internal::SourceStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(std::vector<T> items) {
    return StagePtr<T>(new VectorSourceStage(std::move(items)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (pos_ == items_.size()) return std::nullopt;
    T v = std::move(items_[pos_++]);
    this->Count(v);
    return v;
  }

 private:
  explicit VectorSourceStage(std::vector<T> items)
      : internal::SourceStage<T>("vector"), items_(std::move(items)) {}

  std::vector<T> items_;
  size_t pos_ = 0;
};

template <typename T>
absl::StatusOr<StagePtr<T>> VectorSource(std::vector<T> items) {
  return VectorSourceStage<T>::Make(std::move(items));
}

// Calls `fn` for each element; fn returns an element, std::nullopt at the end,
// or an error (after which the stage stays failed).
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
    const int64_t v = next_;
    next_ += step_;
    Count(v);
    return v;
  }

 private:
  RangeSourceStage(int64_t begin, int64_t end, int64_t step)
      : internal::SourceStage<int64_t>("range"), next_(begin), end_(end), step_(step) {}

  int64_t next_, end_, step_;
};

inline absl::StatusOr<StagePtr<int64_t>> RangeSource(int64_t begin, int64_t end, int64_t step = 1) {
  return RangeSourceStage::Make(begin, end, step);
}

// The first `n` elements of its input (all of them if n < 0).
template <typename T>
class TakeStage final : public UnaryStage<T, T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, int64_t n) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, "take"));
    return StagePtr<T>(new TakeStage(std::move(input), n));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (limit_ >= 0 && taken_.Get() >= limit_) return std::nullopt;
    absl::StatusOr<std::optional<T>> r = this->input().Next();
    if (r.ok() && r->has_value()) taken_.Add(1);
    return r;
  }

 protected:
  StageStats OwnStats() const override {
    StageStats s;
    s.name = "take";
    s.elements = taken_.Get();
    return s;
  }

 private:
  TakeStage(StagePtr<T> input, int64_t n) : UnaryStage<T, T>(std::move(input)), limit_(n) {}

  const int64_t limit_;
  internal::Counter taken_;
};

// Runs the source that `factory` creates `epochs` times in a row (forever if
// epochs < 0). The factory is called at the start of each epoch; it returns
// the source (a StagePtr<T>, or a factory's absl::StatusOr<StagePtr<T>>, so
// `[] { return RangeSource(0, 10); }` works). An error from the factory is
// returned by Next() and stays. An epoch that yields no element ends the
// stream (tf.data's rule): repeating an empty source, even forever, ends
// instead of re-creating it in a busy loop.
template <typename T>
class RepeatStage final : public Stage<T> {
 public:
  using Factory = std::function<absl::StatusOr<StagePtr<T>>()>;
  static absl::StatusOr<StagePtr<T>> Make(Factory factory, int64_t epochs) {
    if (!factory) return absl::InvalidArgumentError("repeat: empty factory");
    return StagePtr<T>(new RepeatStage(std::move(factory), epochs));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    while (true) {
      if (cancelled_.load(std::memory_order_relaxed)) return CancelledError();
      if (!status_.ok()) return status_;
      if (ended_) return std::nullopt;
      if (current_ == nullptr) {
        if (epochs_ >= 0 && epoch_ >= epochs_) return std::nullopt;
        absl::StatusOr<StagePtr<T>> next = factory_();
        if (next.ok() && *next == nullptr) {
          next = absl::InvalidArgumentError("repeat: the factory returned a null stage");
        }
        if (!next.ok()) return status_ = next.status();
        absl::MutexLock lock(&mu_);
        current_ = *std::move(next);
        ++epoch_;
        epoch_empty_ = true;
        if (cancelled_.load(std::memory_order_relaxed)) current_->Cancel();  // raced with Cancel()
      }
      absl::StatusOr<std::optional<T>> r = current_->Next();
      if (!r.ok()) return r;
      if (r->has_value()) {
        epoch_empty_ = false;
        return r;
      }
      // The end of an epoch. An empty one ends the stream: the next epoch of
      // the same source would be empty too (keep the last source's stats).
      if (epoch_empty_ || (epochs_ >= 0 && epoch_ >= epochs_)) {
        ended_ = true;
        return std::nullopt;
      }
      absl::MutexLock lock(&mu_);
      current_.reset();
    }
  }

  void Cancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    absl::MutexLock lock(&mu_);
    if (current_ != nullptr) current_->Cancel();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    absl::MutexLock lock(&mu_);
    if (current_ != nullptr) current_->AppendStats(out);
    StageStats s;
    s.name = "repeat";
    s.extra.emplace_back("epochs_started", static_cast<double>(epoch_));
    out->push_back(std::move(s));
  }

 private:
  RepeatStage(Factory factory, int64_t epochs) : factory_(std::move(factory)), epochs_(epochs) {}

  Factory factory_;
  const int64_t epochs_;
  absl::Status status_;       // the factory's error: sticky (consumer thread only)
  int64_t epoch_ = 0;         // written under mu_ by the consumer
  bool epoch_empty_ = false;  // the current epoch has yielded nothing yet (consumer thread only)
  bool ended_ = false;        // end of stream reached (consumer thread only)
  std::atomic<bool> cancelled_{false};
  mutable absl::Mutex mu_;
  // Written only by the consumer thread under mu_; read by it without the lock.
  StagePtr<T> current_;
};

template <typename T>
absl::StatusOr<StagePtr<T>> RepeatSource(typename RepeatStage<T>::Factory factory, int64_t epochs) {
  return RepeatStage<T>::Make(std::move(factory), epochs);
}

}  // namespace dataecho

#endif  // DATAECHO_SOURCE_H_
