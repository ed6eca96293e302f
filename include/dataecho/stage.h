// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// stage.h: the stage contract every pipeline stage implements.
//
// A stage is a pull iterator. `Next()` blocks until it can return the next
// element, end-of-stream (an empty optional: never an error code), or an
// error. Errors arrive in order: every element produced before an error is
// returned first. After an error or end-of-stream a stage keeps returning it
// (errors are sticky).
//
//   std::unique_ptr<dataecho::Stage<Example>> s = ...;
//   while (true) {
//     absl::StatusOr<std::optional<Example>> next = s->Next();
//     if (!next.ok()) return next.status();   // error, in order
//     if (!next->has_value()) break;          // end of stream
//     Use(**next);
//   }
//
// A stage owns its input stage. `Cancel()` may be called from any thread at
// any time: blocked and later Next() calls return CANCELLED promptly, and the
// request propagates to the inputs. Destroying a stage (which cancels and
// joins any threads it runs) is always prompt, even while its threads are
// blocked on a full queue, an empty queue or a stalled transfer.
//
// Stages are made by factories, never by constructors: each stage class has
// `static absl::StatusOr<StagePtr<T>> Make(input, options)` (sources have a
// free function of the same shape, e.g. RangeSource), which checks its options
// and input and returns INVALID_ARGUMENT naming the bad one; nothing is
// silently clamped. The builder in pipeline.h turns a failed factory into the
// pipeline's error.
//
// Thread safety: Next() is called by one consumer thread at a time; Cancel()
// and AppendStats() are thread-safe.
#ifndef DATAECHO_STAGE_H_
#define DATAECHO_STAGE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dataecho/stats.h"

namespace dataecho {

template <typename T>
class Stage {
 public:
  using value_type = T;

  virtual ~Stage() = default;

  // The next element, std::nullopt at end of stream, or an error.
  virtual absl::StatusOr<std::optional<T>> Next() = 0;

  // Like Next(), but never waits for work running on other threads: returns
  // false (leaving `out` untouched) if no element is ready yet. Stages with a
  // queue (Prefetch) override it; synchronous stages compute the element in
  // the caller's thread, which counts as ready. Used by adaptive echo.
  virtual bool TryNext(absl::StatusOr<std::optional<T>>* out) {
    *out = Next();
    return true;
  }

  // Thread-safe; idempotent. See the file comment.
  virtual void Cancel() = 0;

  // Appends this stage's statistics after its inputs' (source first).
  virtual void AppendStats(std::vector<StageStats>* out) const = 0;
};

template <typename T>
using StagePtr = std::unique_ptr<Stage<T>>;

// The error every stage returns once cancelled.
inline absl::Status CancelledError() { return absl::CancelledError("pipeline cancelled"); }

namespace internal {

// INVALID_ARGUMENT unless `input` is a stage: the first check of every factory.
template <typename T>
absl::Status CheckInput(const StagePtr<T>& input, absl::string_view stage) {
  if (input == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(stage, ": null input stage"));
  return absl::OkStatus();
}

}  // namespace internal

// Base class for a stage with one input: holds the input, forwards Cancel()
// and stats. Subclasses implement Next() and OwnStats().
template <typename Out, typename In>
class UnaryStage : public Stage<Out> {
 public:
  explicit UnaryStage(StagePtr<In> input) : input_(std::move(input)) {}

  void Cancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    OnCancel();
    input_->Cancel();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    input_->AppendStats(out);
    out->push_back(OwnStats());
  }

 protected:
  virtual StageStats OwnStats() const = 0;
  // Hook for stages that must wake their own waiters; runs before the input is cancelled.
  virtual void OnCancel() {}

  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  Stage<In>& input() { return *input_; }
  const Stage<In>& input() const { return *input_; }

 private:
  StagePtr<In> input_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace dataecho

#endif  // DATAECHO_STAGE_H_
