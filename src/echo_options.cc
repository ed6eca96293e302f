// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo_options.h"

#include <cmath>
#include <string>

#include "dataecho/internal/option_checks.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

absl::Status EchoOptions::Validate() const {
  // At most 1e6 copies of one item (adaptive echo's max_factor has the same
  // bound): the copies are counted in 32 bits.
  if (!std::isfinite(factor) || factor < 1.0 || factor > 1e6) {
    return absl::InvalidArgumentError(
        fmt::format("echo factor must be a finite number in [1, 1e6], got {}", factor));
  }
  return absl::OkStatus();
}

absl::Status AdaptiveEchoOptions::Validate() const {
  if (!std::isfinite(max_factor) || max_factor < 1.0 || max_factor > 1e6) {
    return absl::InvalidArgumentError(fmt::format(
        "adaptive echo max_factor must be a finite number in [1, 1e6], got {}", max_factor));
  }
  DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("adaptive echo pool_size", pool_size, 1));
  if (!(min_fresh_fraction >= 0 && min_fresh_fraction <= 1)) {
    return absl::InvalidArgumentError(fmt::format(
        "adaptive echo min_fresh_fraction must be in [0, 1], got {}", min_fresh_fraction));
  }
  if (gate_poll <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("adaptive echo gate_poll must be > 0");
  }
  if (rate_window < 1 || !(rate_smoothing > 0 && rate_smoothing <= 1)) {
    return absl::InvalidArgumentError(fmt::format(
        "adaptive echo rate_window must be >= 1 and rate_smoothing in (0, 1], got {} and {}",
        rate_window, rate_smoothing));
  }
  const size_t bad = replay_decisions.find_first_not_of("FR");
  if (bad != std::string::npos) {
    return absl::InvalidArgumentError(fmt::format(
        "adaptive echo replay_decisions may hold only 'F' and 'R', found '{}' at offset {}",
        replay_decisions[bad], bad));
  }
  return absl::OkStatus();
}

absl::Status AutoEchoOptions::Validate() const {
  DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("auto echo warmup", warmup, 1));
  return adaptive.Validate();
}

}  // namespace dataecho
