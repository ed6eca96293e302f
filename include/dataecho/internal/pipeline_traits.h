// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/pipeline_traits.h: what Pipeline<T>'s builder calls (pipeline.h)
// make of the types their functions return. Not part of the public API.
//
//   using U = typename internal::UnwrapStatusOr<absl::StatusOr<Example>>::type;  // Example
//   absl::StatusOr<StagePtr<U>> s = internal::AsStage<Pipeline<U>>::Convert(std::move(p));
#ifndef DATAECHO_INTERNAL_PIPELINE_TRAITS_H_
#define DATAECHO_INTERNAL_PIPELINE_TRAITS_H_

#include <utility>

#include "absl/status/statusor.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

// R, or the value type of an absl::StatusOr<R> (what Map and Apply take a
// function's result for).
template <typename R>
struct UnwrapStatusOr {
  using type = R;
  static constexpr bool kIsStatusOr = false;
};
template <typename R>
struct UnwrapStatusOr<absl::StatusOr<R>> {
  using type = R;
  static constexpr bool kIsStatusOr = true;
};

// What an Interleave function returns (a Pipeline<U>, a StagePtr<U> or an
// absl::StatusOr<StagePtr<U>>), as a stage factory's result. (A Pipeline is
// what has `Release() &&`, so that this header need not name it.)
template <typename R>
struct AsStage;
template <typename R>
requires requires(R p) { std::move(p).Release(); }
struct AsStage<R> {
  using type = typename UnwrapStatusOr<
      decltype(std::declval<R>().Release())>::type::element_type::value_type;
  static absl::StatusOr<StagePtr<type>> Convert(R p) { return std::move(p).Release(); }
};
template <typename U>
struct AsStage<StagePtr<U>> {
  using type = U;
  static absl::StatusOr<StagePtr<U>> Convert(StagePtr<U> s) { return s; }
};
template <typename U>
struct AsStage<absl::StatusOr<StagePtr<U>>> {
  using type = U;
  static absl::StatusOr<StagePtr<U>> Convert(absl::StatusOr<StagePtr<U>> s) { return s; }
};

// Batch, named through E: a builder member that returns a pipeline of
// batches says Pipeline<typename BatchOf<E>::type>, a dependent type, so that
// Pipeline<Batch> is not instantiated with the class that declares it (and
// can be declared extern after it, pipeline.h).
template <typename E>
struct BatchOf {
  using type = Batch;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_PIPELINE_TRAITS_H_
