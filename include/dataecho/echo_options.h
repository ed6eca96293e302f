// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_options.h: the options of the three echo stages, in one place.
//
//   EchoOptions          fixed factor e (echo.h: EchoStage, `.Echo(...)`)
//   AdaptiveEchoOptions  repeat only while the upstream stalls, at most m times
//                        (adaptive_echo.h: AdaptiveEchoStage, `.AdaptiveEcho(...)`)
//   AutoEchoOptions      adaptive for a warm-up, then a fixed factor measured
//                        from it (auto_echo.h: AutoEchoStage, `.AutoEcho(...)`);
//                        it contains the AdaptiveEchoOptions of its warm-up
//
//   dataecho::AutoEchoOptions options{.adaptive = {.max_factor = 8, .seed = 1}, .warmup = 200};
//   if (absl::Status s = options.Validate(); !s.ok()) return s;
//
// Every stage validates its options in Make() (INVALID_ARGUMENT); Validate()
// lets a program check them earlier. Plain structs: copy and change freely.
#ifndef DATAECHO_ECHO_OPTIONS_H_
#define DATAECHO_ECHO_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "dataecho/export.h"

namespace dataecho {

struct DATAECHO_EXPORT EchoOptions {
  // Echo factor e: finite, in [1, 1e6]. Fractional factors are realized per item.
  double factor = 2.0;
  // Seed of the per-item draw for fractional factors.
  uint64_t seed = 0;
  // Name shown in stats.
  std::string name = "echo";

  absl::Status Validate() const;
};

struct DATAECHO_EXPORT AdaptiveEchoOptions {
  // m: the most emissions of one item, the fresh one included. Finite, in
  // [1, 1e6]. Fractional values are realized per item (adaptive_echo.h).
  double max_factor = 4.0;
  // k: the most recent items kept for repeats. >= 1.
  int64_t pool_size = 64;
  // Floor on fresh / emitted: a repeat that would take the fraction of fresh
  // elements below it waits for a fresh item instead. In [0, 1]; 0 = no floor.
  double min_fresh_fraction = 0;
  // Seed of the per-item budget draw for fractional m.
  uint64_t seed = 0;
  // R̂: fresh items per estimation window (>= 1) and the weight of a new
  // window in the moving estimate (in (0, 1]).
  int64_t rate_window = 16;
  double rate_smoothing = 0.25;
  // Debugging: if set, every emitted element appends 'F' (fresh) or 'R'
  // (repeat) to *record_decisions. REQUIRES: outlives the stage; read it only
  // while no Next() runs.
  std::string* record_decisions = nullptr;
  // Debugging: decisions ('F'/'R') to follow instead of asking the upstream
  // whether an item is ready. Once they run out, the stage is adaptive again.
  // An 'R' with no eligible item means the input differs from the recorded
  // run: FAILED_PRECONDITION.
  std::string replay_decisions = "";
  // Demand gate (adaptive_echo.h): if set, a repeat is emitted only while it
  // returns true; otherwise the request waits for a fresh item, polling the
  // input (TryNext) and the gate every `gate_poll`. Called from the consumer's
  // thread; must be cheap. Empty = repeat whenever no fresh item is ready.
  std::function<bool()> repeat_gate = nullptr;
  absl::Duration gate_poll = absl::Microseconds(100);
  // The clock (nanoseconds) for R̂; empty = the monotonic clock. For
  // simulations and tests.
  std::function<int64_t()> clock = nullptr;
  // Name shown in stats.
  std::string name = "adaptive_echo";

  absl::Status Validate() const;
};

struct DATAECHO_EXPORT AutoEchoOptions {
  // The warm-up's adaptive echo: `adaptive.max_factor` is also the largest
  // factor that may be chosen, `adaptive.seed` seeds the warm-up budgets and
  // the fixed factor's copies alike. `adaptive.name` is not used (see `name`).
  AdaptiveEchoOptions adaptive;
  // Elements emitted (adaptively) before the factor is fixed. >= 1.
  int64_t warmup = 256;
  // Name shown in stats.
  std::string name = "auto_echo";

  absl::Status Validate() const;
};

}  // namespace dataecho

#endif  // DATAECHO_ECHO_OPTIONS_H_
