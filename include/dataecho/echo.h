// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo.h: data echoing — emit every upstream item e times.
//
// With factor e >= 1, each fresh item from the input is emitted floor(e)
// times, plus once more with probability e - floor(e), drawn per item from the
// stage's seeded generator; over many items the realized factor converges to
// e. Copies are emitted back to back (put a Shuffle after example echoing so
// they spread) and share payload bytes. Each copy is marked through
// ElementTraits<T>::MarkRepeat: repeat index 0 is the fresh read, k the k-th
// repeat (for a Batch, a repeat has fresh_rows = 0).
//
// Place Echo after a Prefetch boundary so the upstream keeps reading while
// repeats are served:
//
//   auto echoed = dataecho::EchoStage<Example>::Make(
//       dataecho::PrefetchStage<Example>::Make(std::move(decoded), {.depth = 64}),
//       {.factor = 2.5, .seed = 42});
//   if (!echoed.ok()) return echoed.status();   // INVALID_ARGUMENT for e < 1, NaN, inf
//
// Epochs (repeat.h): the draws of epoch e come from a generator seeded by
// (seed, e), started by the first fresh item of epoch e (or by Restart(e)
// below a Repeat); epoch 0 draws from `seed` alone.
//
// Stats: "fresh" (items read from upstream), elements (emitted),
// "realized_factor" = emitted / fresh, input_wait = time blocked on an input
// that had nothing ready (stats.h; a Prefetch with an empty queue: a
// synchronous input computes in Echo's thread and that time is not waiting),
// "rate_ratio" = R̂, the measured ratio of the upstream's time per fresh item
// to the consumer's time per element, over windows of 64 fresh items (as
// adaptive echo's, internal/echo_core.h; 0 until a window closed; about e
// while the upstream keeps up, since a faster upstream cannot be seen through
// a full queue). The ideal speedup of echoing is min(e, R).
//
// Adaptive mode (emit repeats only while the upstream has nothing ready) is in
// adaptive_echo.h; a factor measured from a warm-up in auto_echo.h. All three
// draw per item with internal::EchoDraw; options are in echo_options.h, and
// where in the pipeline echo goes is an option of echo_placement.h.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_ECHO_H_
#define DATAECHO_ECHO_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/echo_options.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/echo_core.h"
#include "dataecho/internal/echo_stage_base.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename T>
class EchoStage final : public internal::EchoStageBase<T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, EchoOptions options) {
    if (absl::Status s = options.Validate(); !s.ok()) return s;
    return StagePtr<T>(new EchoStage(std::move(input), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    return this->NextBackToBack([this] { return EmitRepeat(); },
                                [this](const Result& r) { AcceptFresh(r); },
                                [this](int64_t waited) { rate_.AddBlocked(waited); });
  }

  // Ready when a copy is pending or the input has an element ready.
  bool TryNext(absl::StatusOr<std::optional<T>>* out) override {
    return this->TryNextBackToBack(
        out, [this] { return EmitRepeat(); }, [this](const Result& r) { AcceptFresh(r); });
  }

 protected:
  // State (the shape of stage.h): the draws, then the copies' part (the
  // repeats left of the current item and a reference to it).
  std::string StateName() const override { return options_.name; }
  uint64_t StateOptionsHash() const override { return Hash(); }
  absl::Status SaveOwn(StateWriter& w) override {
    this->SaveDraws(w);
    return this->SaveCopies(w);
  }
  absl::Status RestoreOwn(StateReader& r) override {
    this->RestoreDraws(r);
    return this->RestoreCopies(r, options_.name);
  }

  StageStats OwnStats() const override {
    StageStats s = this->counts().ToStats(options_.name, {{"factor", options_.factor}});
    s.extra.emplace_back("rate_ratio", rate_ratio_.load(std::memory_order_relaxed));
    return s;
  }

 private:
  EchoStage(StagePtr<T> input, EchoOptions options)
      : internal::EchoStageBase<T>(std::move(input), options.factor, options.seed),
        options_(std::move(options)) {}

  uint64_t Hash() const { return OptionsHash().Add(options_.factor).Add(options_.seed).value(); }

  absl::StatusOr<std::optional<T>> EmitRepeat() {
    rate_.AddEmitted();
    return this->EmitCopy();
  }

  // Counts a fresh element `r` (if it is one) and decides how many copies
  // of it follow.
  void AcceptFresh(const absl::StatusOr<std::optional<T>>& r) {
    if (!r.ok() || !r->has_value()) return;
    this->CountFresh(**r);
    if (!rate_.started()) rate_.Start(internal::NowNanos());
    if (rate_.AddFreshLazy(internal::NowNanos))
      rate_ratio_.store(rate_.estimate(), std::memory_order_relaxed);
    rate_.AddEmitted();
    this->HoldCopies(**r, this->DrawCopies(**r));
  }

  const EchoOptions options_;
  // R̂ (consumer thread); the clock is read once per window of fresh items.
  internal::RateRatioEstimator rate_{/*window=*/64, /*smoothing=*/0.25};
  std::atomic<double> rate_ratio_{0};
};

// Compiled once, in src/echo.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(EchoStage);

}  // namespace dataecho

#endif  // DATAECHO_ECHO_H_
