// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// auto_echo.h: fixed-factor echoing with the factor picked from a measurement.
//
// AutoEchoStage starts as an AdaptiveEchoStage (adaptive_echo.h) while it
// measures R̂, the ratio of the upstream's time per fresh item to the
// consumer's time per element. After `warmup` emitted elements (and at least
// one R̂ window, i.e. `rate_window` fresh items) it fixes the echo factor at
//
//   e = clamp(R̂, 1, max_factor)
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
//       .AutoEcho({.max_factor = 8, .warmup = 200, .seed = 1})
//       .Shuffle({.buffer_size = 1000});
//
// Stats: those of AdaptiveEchoStage plus "warmup" and "chosen_factor" (0
// until the switch).
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_AUTO_ECHO_H_
#define DATAECHO_AUTO_ECHO_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "dataecho/adaptive_echo.h"
#include "fmt/format.h"

namespace dataecho {

struct AutoEchoOptions {
  // The largest factor that may be chosen (and m during the warm-up). In [1, 1e6].
  double max_factor = 4.0;
  // Elements emitted (adaptively) before the factor is fixed. >= 1.
  int64_t warmup = 256;
  // Pool of recent items during the warm-up. >= 1.
  int64_t pool_size = 64;
  // Seed of the per-item draws (warm-up budgets and the fixed factor's copies).
  uint64_t seed = 0;
  // R̂ estimation, as in AdaptiveEchoOptions.
  int64_t rate_window = 16;
  double rate_smoothing = 0.25;
  // The clock (nanoseconds) for R̂; empty = the monotonic clock. For tests.
  std::function<int64_t()> clock;
  // Name shown in stats.
  std::string name = "auto_echo";
};

template <typename T>
class AutoEchoStage final : public AdaptiveEchoStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, AutoEchoOptions options) {
    if (options.warmup < 1) {
      return absl::InvalidArgumentError(
          fmt::format("auto echo warmup must be >= 1, got {}", options.warmup));
    }
    AdaptiveEchoOptions adaptive{.max_factor = options.max_factor,
                                 .pool_size = options.pool_size,
                                 .seed = options.seed,
                                 .rate_window = options.rate_window,
                                 .rate_smoothing = options.rate_smoothing,
                                 .clock = std::move(options.clock),
                                 .name = std::move(options.name)};
    if (absl::Status s = adaptive.Validate(); !s.ok()) return s;
    return StagePtr<T>(new AutoEchoStage(std::move(input), std::move(adaptive), options.warmup));
  }

 private:
  AutoEchoStage(StagePtr<T> input, AdaptiveEchoOptions options, int64_t warmup)
      : AdaptiveEchoStage<T>(std::move(input), std::move(options), warmup) {}
};

}  // namespace dataecho

#endif  // DATAECHO_AUTO_ECHO_H_
