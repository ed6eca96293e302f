// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/pipeline_members.h: the members of Pipeline<T> (pipeline.h) that
// are defined out of the class. Included by pipeline.h; include that instead.
// Not part of the public API.
//
//   #include "dataecho/pipeline.h"  // not this file
#ifndef DATAECHO_INTERNAL_PIPELINE_MEMBERS_H_
#define DATAECHO_INTERNAL_PIPELINE_MEMBERS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "dataecho/checkpoint.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/pipeline.h"
#include "dataecho/stats.h"
#include "dataecho/status_macros.h"
#include "dataecho/trace.h"

namespace dataecho {

// Pipeline<T>'s members that are not templates of their own, defined out of
// the class: for the element types compiled in the library (the extern
// templates at the end of pipeline.h) a program then links them instead of
// compiling them again to inline them.
template <typename T>
Pipeline<T> Pipeline<T>::Prefetch(PrefetchOptions options) && {
  return Then<PrefetchStage<T>>(std::move(options));
}

template <typename T>
Pipeline<T> Pipeline<T>::Echo(EchoOptions options) && {
  return Then<EchoStage<T>>(std::move(options));
}

template <typename T>
Pipeline<T> Pipeline<T>::AdaptiveEcho(AdaptiveEchoOptions options) && {
  return Then<AdaptiveEchoStage<T>>(std::move(options));
}

template <typename T>
Pipeline<T> Pipeline<T>::AutoEcho(AutoEchoOptions options) && {
  return Then<AutoEchoStage<T>>(std::move(options));
}

template <typename T>
Pipeline<T> Pipeline<T>::Shuffle(ShuffleOptions options) && {
  return Then<ShuffleStage<T>>(std::move(options));
}

template <typename T>
Pipeline<T> Pipeline<T>::Throttle(ThrottleOptions options) && {
  return Then<ThrottleStage<T>>(std::move(options));
}

template <typename T>
Pipeline<T> Pipeline<T>::Take(int64_t n) && {
  return Then<TakeStage<T>>(n);
}

template <typename T>
Pipeline<T> Pipeline<T>::Repeat(int64_t epochs, std::string name) && {
  return Then<RepeatStage<T>>(epochs, std::move(name));
}

template <typename T>
Pipeline<T> Pipeline<T>::Cache(CacheOptions options) && {
  return Then<CacheStage<T>>(std::move(options));
}

template <typename T>
absl::StatusOr<std::optional<T>> Pipeline<T>::Next() {
  if (!status_.ok()) return status_;
  consumer_->Before();
  absl::StatusOr<std::optional<T>> r = stage_->Next();
  consumer_->After();
  if (!r.ok()) status_ = r.status();  // stages keep their errors; so does status()
  return r;
}

template <typename T>
std::vector<StageStats> Pipeline<T>::Stats() const {
  std::vector<StageStats> out;
  if (stage_ != nullptr) stage_->AppendStats(&out);
  if (!out.empty()) consumer_->AppendTo(&out.back());
  internal::MakeStageNamesUnique(&out);
  return out;
}

template <typename T>
absl::StatusOr<std::string> Pipeline<T>::SaveState() {
  if (!status_.ok()) return status_;
  TraceScope span("save state", "checkpoint");
  StateWriter w;
  DATAECHO_RETURN_IF_ERROR(stage_->SaveState(w));
  return w.Finish();
}

template <typename T>
absl::StatusOr<absl::Cord> Pipeline<T>::SaveStateCord() {
  if (!status_.ok()) return status_;
  TraceScope span("save state", "checkpoint");
  StateWriter w;
  DATAECHO_RETURN_IF_ERROR(stage_->SaveState(w));
  return w.FinishCord();
}

template <typename T>
absl::Status Pipeline<T>::RestoreState(std::string_view state) {
  return Restore(StateReader::Parse(state));
}

template <typename T>
absl::Status Pipeline<T>::Restore(absl::StatusOr<StateReader> parsed, std::string_view section,
                                  absl::FunctionRef<absl::Status(Stage<T>&, StateReader&)> read) {
  if (!status_.ok()) return status_;
  if (!parsed.ok()) return parsed.status();
  StateReader& r = *parsed;
  StateWriter here;
  DATAECHO_RETURN_IF_ERROR(stage_->SaveState(here));
  const bool has_section = !section.empty();
  if (has_section) here.BeginStage(section, 0);
  DATAECHO_RETURN_IF_ERROR(CompareShapes(r.shape(), here.shape()));
  absl::Status s = stage_->RestoreState(r);
  if (s.ok()) s = r.status();
  if (s.ok() && has_section) s = r.BeginStage(section);
  if (s.ok() && has_section) s = read(*stage_, r);
  if (s.ok()) s = r.status();
  if (s.ok()) s = r.Finish();
  if (!s.ok()) status_ = s;
  return s;
}

}  // namespace dataecho

#endif  // DATAECHO_INTERNAL_PIPELINE_MEMBERS_H_
