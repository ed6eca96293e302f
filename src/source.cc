// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// RangeSourceStage, and the instantiations source.h declares extern: compiled
// here once for every program.
#include "dataecho/source.h"

#include <algorithm>
#include <cstdint>

#include "dataecho/example.h"
#include "dataecho/internal/option_checks.h"
#include "dataecho/record.h"

namespace dataecho {

absl::StatusOr<StagePtr<int64_t>> RangeSourceStage::Make(int64_t begin, int64_t end, int64_t step) {
  DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("range step", step, 1));
  return StagePtr<int64_t>(new RangeSourceStage(begin, end, step));
}

absl::StatusOr<std::optional<int64_t>> RangeSourceStage::Next() {
  if (cancelled()) return CancelledError();
  if (next_ >= end_) return std::nullopt;
  int64_t v = next_;
  // end_ - next_ in unsigned arithmetic is exact (end_ > next_) and cannot
  // overflow; next_ + step_ is only computed when it stays below end_.
  const uint64_t left = static_cast<uint64_t>(end_) - static_cast<uint64_t>(next_);
  next_ = left <= static_cast<uint64_t>(step_) ? end_ : next_ + step_;
  Count(v);
  return v;
}

absl::Status RangeSourceStage::SaveState(StateWriter& w) {
  w.BeginStage("range", OptionsHash().Add(begin_).Add(end_).Add(step_).value());
  w.I64(next_);
  return absl::OkStatus();
}

absl::Status RangeSourceStage::RestoreState(StateReader& r) {
  DATAECHO_RETURN_IF_ERROR(r.BeginStage("range"));
  const int64_t next = r.I64();
  DATAECHO_RETURN_IF_ERROR(r.status());
  // A position at or past the end means "ended" (states of older versions
  // hold the value after the last one, which may lie past the end).
  const uint64_t from_begin = static_cast<uint64_t>(next) - static_cast<uint64_t>(begin_);
  if (next < begin_ || (next < end_ && from_begin % static_cast<uint64_t>(step_) != 0)) {
    return absl::DataLossError(absl::StrCat("pipeline state: range position ", next));
  }
  next_ = next < end_ ? next : std::max(begin_, end_);  // (begin_ > end_: an empty range)
  return absl::OkStatus();
}

DATAECHO_TEMPLATES_FOR_ELEMENTS(TakeStage);
template class VectorSourceStage<Example>;

}  // namespace dataecho
