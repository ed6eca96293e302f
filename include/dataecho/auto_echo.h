// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// auto_echo.h: fixed-factor echoing with the factor picked from a measurement.
//
// AutoEchoStage starts echoing like an AdaptiveEchoStage (adaptive_echo.h),
// with the AdaptiveEchoOptions in AutoEchoOptions::adaptive, while it
// measures R̂, the ratio of the upstream's time per fresh item to the
// consumer's time per element. After `warmup` emitted elements (and at least
// one R̂ window, i.e. `adaptive.rate_window` fresh items) it fixes the echo
// factor at
//
//   e = clamp(R̂, 1, adaptive.max_factor)
//
// and from then on behaves exactly like EchoStage with that factor: each
// fresh item is emitted floor(e) times, or once more with probability
// e - floor(e) drawn per item from the seed, copies back to back, waiting for
// the upstream after the last copy. So the warm-up depends on timing (like
// adaptive echo), the chosen factor depends on the measurement, and
// everything after the switch is deterministic given e. Items still pooled at
// the switch are not repeated further.
//
//   auto p = dataecho::FromVector(std::move(examples))
//       .Throttle({.latency = absl::Milliseconds(3)})
//       .Prefetch({.depth = 64})
//       .AutoEcho({.adaptive = {.max_factor = 8, .seed = 1}, .warmup = 200})
//       .Shuffle({.buffer_size = 1000});
//
// Checkpoints (docs/checkpoint.md): the state holds what adaptive echo's
// does (adaptive_echo.h) and the factor once fixed; a state saved after the
// switch restores the exact continuation. One saved during the warm-up keeps
// its progress (elements emitted), but the factor is measured again.
//
// Stats: those of AdaptiveEchoStage plus "warmup" and "chosen_factor" (0
// until the switch). AdaptiveEchoStage and AutoEchoStage are siblings over
// internal::PooledEchoStage; the switch itself is internal::AutoEchoSwitch.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_AUTO_ECHO_H_
#define DATAECHO_AUTO_ECHO_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"

#include "dataecho/echo_options.h"
#include "dataecho/export.h"
#include "dataecho/internal/echo_core.h"
#include "dataecho/internal/pooled_echo_stage.h"
#include "dataecho/memory.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"

namespace dataecho {

template <typename T>
class AutoEchoStage final : public internal::PooledEchoStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, AutoEchoOptions options) {
    if (absl::Status s = options.Validate(); !s.ok()) return s;
    // The pool may fill up to pool_size items: refuse one beyond memory.
    if (absl::Status s = CheckMemoryEstimate(options.name, "pool_size", options.adaptive.pool_size,
                                             sizeof(T), 0, "");
        !s.ok())
      return s;
    return StagePtr<T>(new AutoEchoStage(std::move(input), std::move(options)));
  }

 protected:
  // Adaptive until the switch, back to back with the chosen factor after it.
  bool BackToBack() override {
    if (std::optional<double> e =
            switch_.Check(static_cast<int64_t>(this->decisions()), this->core().estimator(),
                          this->core().options().max_factor))
      this->FixFactor(*e);
    return switch_.fixed();
  }

  // Checkpoints: the name, and whether (and at what) the factor was fixed.
  const std::string& OwnName() const override { return name_; }
  void HashOptions(OptionsHash& h) const override {
    internal::PooledEchoStage<T>::HashOptions(h);
    h.Add(warmup_);
  }
  void SavePolicy(StateWriter& w) const override {
    w.Bool(switch_.fixed());
    if (switch_.fixed()) w.Double(switch_.chosen_factor());
  }
  absl::Status RestorePolicy(StateReader& r) override {
    if (!r.Bool()) return r.status();
    const double factor = r.Double();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (!(factor >= 1.0 && factor <= this->core().options().max_factor)) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", name_, " fixed at factor ", factor));
    }
    switch_.RestoreFixed(factor);
    this->FixFactor(factor);
    return absl::OkStatus();
  }

  StageStats OwnStats() const override {
    StageStats s = this->core().Stats(name_, this->counts());
    switch_.AppendStats(&s);
    return s;
  }

 private:
  AutoEchoStage(StagePtr<T> input, AutoEchoOptions options)
      : internal::PooledEchoStage<T>(std::move(input), std::move(options.adaptive)),
        name_(std::move(options.name)),
        warmup_(options.warmup),
        switch_(options.warmup) {}

  const std::string name_;
  const int64_t warmup_;
  internal::AutoEchoSwitch switch_;
};

// AutoEchoStage for the library's element types are compiled once, in
// src/auto_echo.cc: programs link them instead of compiling them again. Other
// types are instantiated where they are used, as usual.
extern template class DATAECHO_EXPORT AutoEchoStage<Example>;
extern template class DATAECHO_EXPORT AutoEchoStage<Batch>;

}  // namespace dataecho

#endif  // DATAECHO_AUTO_ECHO_H_
