// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/option_checks.h: the check an options struct's Validate() (or a
// factory) makes of a count or a size, with the one message every stage
// gives for it. Not part of the public API.
//
//   absl::Status Validate() const {
//     DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("shuffle buffer_size", buffer_size, 1));
//     return internal::CheckAtLeast("shuffle max_bytes", max_bytes, 0);
//   }
#ifndef DATAECHO_INTERNAL_OPTION_CHECKS_H_
#define DATAECHO_INTERNAL_OPTION_CHECKS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "dataecho/internal/str_cat.h"

namespace dataecho::internal {

// OK if value >= min; else INVALID_ARGUMENT "<what> must be >= <min>, got
// <value>" (`what` names the stage or object and the option).
inline absl::Status CheckAtLeast(std::string_view what, int64_t value, int64_t min) {
  if (value >= min) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(what, " must be >= ", min, ", got ", value));
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_OPTION_CHECKS_H_
