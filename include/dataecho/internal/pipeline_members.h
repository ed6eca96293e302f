// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/pipeline_members.h: the members of Pipeline<T> (builder.h) that
// are defined out of the class, and the stage factories it declares
// (internal/stage_factories.h), for any element type. Included by
// pipeline.h; include that instead. Not part of the public API.
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
#include "dataecho/adaptive_echo.h"
#include "dataecho/auto_echo.h"
#include "dataecho/builder.h"
#include "dataecho/cache.h"
#include "dataecho/checkpoint.h"
#include "dataecho/echo.h"
#include "dataecho/filter.h"
#include "dataecho/interleave.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/map.h"
#include "dataecho/prefetch.h"
#include "dataecho/repeat.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "dataecho/stats.h"
#include "dataecho/status_macros.h"
#include "dataecho/throttle.h"
#include "dataecho/trace.h"
#include "dataecho/zip.h"

namespace dataecho {

// Pipeline<T>'s members that are not templates of their own, defined out of
// the class: for the element types compiled in the library (the extern
// templates at the end of pipeline.h) a program then links them instead of
// compiling them again to inline them.
template <typename T>
Pipeline<T>::Pipeline(StagePtr<T> stage) : stage_(std::move(stage)) {
  if (stage_ == nullptr) status_ = absl::InvalidArgumentError("pipeline built from a null stage");
}

template <typename T>
Pipeline<T>::Pipeline(absl::Status error) : status_(std::move(error)) {}

template <typename T>
Pipeline<T>::Pipeline(absl::StatusOr<StagePtr<T>> stage)
    : Pipeline(stage.ok() ? Pipeline(*std::move(stage)) : Pipeline(stage.status())) {}

template <typename T>
Pipeline<T>::Pipeline(Pipeline&&) noexcept = default;
template <typename T>
Pipeline<T>& Pipeline<T>::operator=(Pipeline&&) noexcept = default;
template <typename T>
Pipeline<T>::~Pipeline() = default;

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
  if (!status_.ok()) [[unlikely]]
    return status_;
  return PullFromStage();
}

template <typename T>
absl::StatusOr<std::optional<T>> Pipeline<T>::PullFromStage() {
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

namespace internal {

// The factories internal/stage_factories.h declares.
template <typename In, typename Out>
absl::StatusOr<StagePtr<Out>> MapFactory<In, Out>::Make(StagePtr<In> input, MapFn<In, Out> fn,
                                                        MapOptions options) {
  return MapStage<In, Out>::Make(std::move(input), std::move(fn), std::move(options));
}

template <typename T>
absl::StatusOr<StagePtr<T>> FilterFactory<T>::Make(StagePtr<T> input, FilterPredicate<T> pred,
                                                   FilterOptions options) {
  return FilterStage<T>::Make(std::move(input), std::move(pred), std::move(options));
}

template <typename A, typename B>
absl::StatusOr<StagePtr<std::pair<A, B>>> MakeZipStage(StagePtr<A> first, StagePtr<B> second,
                                                       ZipOptions options) {
  return ZipStage<A, B>::Make(std::move(first), std::move(second), std::move(options));
}

template <typename T, typename U>
absl::StatusOr<StagePtr<U>> MakeInterleaveStage(StagePtr<T> input, InterleaveFn<T, U> fn,
                                                InterleaveStageOptions options) {
  return InterleaveStage<T, U>::Make(std::move(input), std::move(fn), std::move(options));
}

}  // namespace internal
}  // namespace dataecho

#endif  // DATAECHO_INTERNAL_PIPELINE_MEMBERS_H_
