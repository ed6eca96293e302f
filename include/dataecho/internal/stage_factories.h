// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/stage_factories.h: the factories of the stages the builder
// (builder.h) makes from a template member (Map, Filter, Zip, Interleave,
// Batch, PaddedBatch), declared without the stages' definitions, and
// the check that stops a compile that would need them. Not part of the
// public API.
//
//   #include "dataecho/builder.h"  // not this file
#ifndef DATAECHO_INTERNAL_STAGE_FACTORIES_H_
#define DATAECHO_INTERNAL_STAGE_FACTORIES_H_

#include <functional>
#include <utility>

#include "absl/status/statusor.h"
#include "dataecho/batch_options.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/map_options.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"

namespace dataecho::internal {

// Complete where the definitions of the stages a Pipeline<T> (or a Map from T
// to U: <T, U>) makes are at hand: here for the types the library compiles
// them for, and for every list once pipeline.h, which defines the primary
// template, is included (so <T, U, void>, never specialized here, asks for
// pipeline.h).
template <typename... Ts>
struct StagesDefinedFor;
template <>
struct StagesDefinedFor<Record> {};
template <>
struct StagesDefinedFor<Example> {};
template <>
struct StagesDefinedFor<Batch> {};
template <>
struct StagesDefinedFor<Record, Example> {};
template <>
struct StagesDefinedFor<Record, Record> {};
template <>
struct StagesDefinedFor<Example, Example> {};
template <>
struct StagesDefinedFor<Batch, Batch> {};

template <typename... Ts>
consteval bool StagesDefined() {
  static_assert(
      requires { sizeof(StagesDefinedFor<Ts...>); },
      "dataecho/builder.h builds pipelines of Record, Example and Batch with the stages "
      "the library compiles for them; for a pipeline of another element type, a Map "
      "between other types, Zip or Interleave, include dataecho/pipeline.h");
  return true;
}

// The factories the builder calls: declared here, defined with the stages
// (internal/pipeline_members.h, included by pipeline.h), compiled in the
// library for the types above (src/pipeline.cc).
// (Map and Filter as static members of class templates: a function
// template's name carries its return type, which the library's version
// script, cmake/dataecho.map, would not export.)
template <typename In, typename Out>
struct DATAECHO_EXPORT MapFactory {
  static absl::StatusOr<StagePtr<Out>> Make(StagePtr<In> input, MapFn<In, Out> fn,
                                            MapOptions options);
};
template <typename T>
class DATAECHO_EXPORT FilterFactory {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, FilterPredicate<T> pred,
                                          FilterOptions options);
};
// Compiled in the library (src/pipeline.cc), for the types StagesDefinedFor
// lists. (The attribute here: an instantiation over types the library does
// not export would otherwise be hidden.)
extern template struct DATAECHO_EXPORT MapFactory<Record, Example>;
extern template struct DATAECHO_EXPORT MapFactory<Record, Record>;
extern template struct DATAECHO_EXPORT MapFactory<Example, Example>;
extern template struct DATAECHO_EXPORT MapFactory<Batch, Batch>;
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(FilterFactory);

template <typename A, typename B>
absl::StatusOr<StagePtr<std::pair<A, B>>> MakeZipStage(StagePtr<A> first, StagePtr<B> second,
                                                       ZipOptions options);
template <typename T, typename U>
using InterleaveFn = std::function<absl::StatusOr<StagePtr<U>>(T)>;
template <typename T, typename U>
absl::StatusOr<StagePtr<U>> MakeInterleaveStage(StagePtr<T> input, InterleaveFn<T, U> fn,
                                                InterleaveStageOptions options);
DATAECHO_EXPORT absl::StatusOr<StagePtr<Batch>> MakeBatchStage(StagePtr<Example> input,
                                                               BatchOptions options);
DATAECHO_EXPORT absl::StatusOr<StagePtr<Batch>> MakePaddedBatchStage(StagePtr<Example> input,
                                                                     PaddedBatchOptions options);

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_STAGE_FACTORIES_H_
