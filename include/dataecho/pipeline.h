// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// pipeline.h: the fluent, typed pipeline builder.
//
// A Pipeline<T> owns a chain of stages ending in elements of type T. Each
// builder call consumes the pipeline and returns a longer one; the element
// type flows through Map's return type. Each call runs the stage's factory
// (stage.h); an invalid option anywhere makes the whole pipeline hold the
// factory's INVALID_ARGUMENT, and every later call passes it on: status()
// reports it and Next() returns it.
//
//   auto pipeline = dataecho::FromVector(std::move(examples))
//       .Throttle({.latency = absl::Milliseconds(1)})        // a slow upstream
//       .Map(Decode, {.parallelism = 4})                      // parallel, in order
//       .Prefetch({.depth = 64})                              // upstream runs ahead
//       .Echo({.factor = 2.0, .seed = 1})                     // example echoing
//       .Map(RandomCropAndFlip)                               // new crops; cheap: inline
//       .Shuffle({.buffer_size = 10000, .seed = 2})           // spread the copies
//       .Batch({.batch_size = 256, .cast = dataecho::DType::kFloat16})
//       .Prefetch({.depth = 2});
//   if (!pipeline.status().ok()) return pipeline.status();
//   while (true) {
//     auto batch = pipeline.Next();
//     if (!batch.ok()) return batch.status();
//     if (!batch->has_value()) break;
//     Train(**batch);
//   }
//   std::cout << dataecho::FormatStatsTable(pipeline.Stats());
//
// Batch echoing is `.Batch(...).Echo(...)`. `.AdaptiveEcho(...)` repeats only
// while the upstream has nothing ready; `.AutoEcho(...)` picks a fixed factor
// from a warm-up measurement. To build everything after the decoded
// upstream's Prefetch with echo at a placement chosen at run time (a flag),
// use EchoedBatches (echo_placement.h). For a stage of your own, pass a
// factory to Apply(): `.Apply([](dataecho::StagePtr<T> in) { return Wrap(std::move(in)); })`.
//
// Thread safety: as for a stage (stage.h): one consumer thread calls Next();
// Cancel() and Stats() from any thread.
#ifndef DATAECHO_PIPELINE_H_
#define DATAECHO_PIPELINE_H_

#include <concepts>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/adaptive_echo.h"
#include "dataecho/auto_echo.h"
#include "dataecho/batch.h"
#include "dataecho/echo.h"
#include "dataecho/example.h"
#include "dataecho/map.h"
#include "dataecho/prefetch.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "dataecho/stage.h"
#include "dataecho/throttle.h"

namespace dataecho {
namespace internal {

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

}  // namespace internal

template <typename T>
class Pipeline {
 public:
  using value_type = T;

  explicit Pipeline(StagePtr<T> stage) : stage_(std::move(stage)) {
    if (stage_ == nullptr) status_ = absl::InvalidArgumentError("pipeline built from a null stage");
  }
  explicit Pipeline(absl::Status error) : status_(std::move(error)) {}
  Pipeline(absl::StatusOr<StagePtr<T>> stage)  // NOLINT: implicit on purpose
      : Pipeline(stage.ok() ? Pipeline(*std::move(stage)) : Pipeline(stage.status())) {}

  Pipeline(Pipeline&&) noexcept = default;
  Pipeline& operator=(Pipeline&&) noexcept = default;

  // OK, or the first invalid option met while building.
  const absl::Status& status() const { return status_; }

  // Applies `fn` to every element; fn returns U or absl::StatusOr<U>.
  template <typename F>
  auto Map(F fn, MapOptions options = {}) && {
    using R = std::invoke_result_t<F&, T>;
    using U = typename internal::UnwrapStatusOr<std::decay_t<R>>::type;
    if (!status_.ok()) return Pipeline<U>(status_);
    typename MapStage<T, U>::Fn wrapped;
    if constexpr (internal::UnwrapStatusOr<std::decay_t<R>>::kIsStatusOr) {
      wrapped = std::move(fn);
    } else {
      wrapped = [fn = std::move(fn)](T x) mutable -> absl::StatusOr<U> { return fn(std::move(x)); };
    }
    return Pipeline<U>(
        MapStage<T, U>::Make(std::move(stage_), std::move(wrapped), std::move(options)));
  }

  Pipeline Prefetch(PrefetchOptions options = {}) && {
    return Then(
        [&](StagePtr<T> in) { return PrefetchStage<T>::Make(std::move(in), std::move(options)); });
  }
  Pipeline Echo(EchoOptions options) && {
    return Then(
        [&](StagePtr<T> in) { return EchoStage<T>::Make(std::move(in), std::move(options)); });
  }
  // Echo only while the upstream has nothing ready (adaptive_echo.h).
  Pipeline AdaptiveEcho(AdaptiveEchoOptions options) && {
    return Then([&](StagePtr<T> in) {
      return AdaptiveEchoStage<T>::Make(std::move(in), std::move(options));
    });
  }
  // Fixed echo with the factor measured during a warm-up (auto_echo.h).
  Pipeline AutoEcho(AutoEchoOptions options) && {
    return Then(
        [&](StagePtr<T> in) { return AutoEchoStage<T>::Make(std::move(in), std::move(options)); });
  }
  Pipeline Shuffle(ShuffleOptions options) && {
    return Then(
        [&](StagePtr<T> in) { return ShuffleStage<T>::Make(std::move(in), std::move(options)); });
  }
  Pipeline Throttle(ThrottleOptions options) && {
    return Then(
        [&](StagePtr<T> in) { return ThrottleStage<T>::Make(std::move(in), std::move(options)); });
  }
  Pipeline Take(int64_t n) && {
    return Then([&](StagePtr<T> in) { return TakeStage<T>::Make(std::move(in), n); });
  }

  // Examples to fused batches (batch.h).
  Pipeline<::dataecho::Batch> Batch(BatchOptions options) && requires std::same_as<T, Example> {
    if (!status_.ok()) return Pipeline<::dataecho::Batch>(status_);
    return Pipeline<::dataecho::Batch>(BatchStage::Make(std::move(stage_), std::move(options)));
  }

  // Appends a stage made by `factory(StagePtr<T>)`, which returns StagePtr<U>
  // or absl::StatusOr<StagePtr<U>>.
  template <typename F>
  auto Apply(F factory) && {
    using R = std::decay_t<std::invoke_result_t<F&, StagePtr<T>>>;
    using P = typename internal::UnwrapStatusOr<R>::type;
    using U = typename P::element_type::value_type;
    if (!status_.ok()) return Pipeline<U>(status_);
    return Pipeline<U>(factory(std::move(stage_)));
  }

  // The next element, std::nullopt at the end, or an error (see stage.h).
  absl::StatusOr<std::optional<T>> Next() {
    if (!status_.ok()) return status_;
    return stage_->Next();
  }

  // Thread-safe: blocked and later Next() calls return CANCELLED.
  void Cancel() {
    if (stage_ != nullptr) stage_->Cancel();
  }

  // Every stage's statistics, source first.
  std::vector<StageStats> Stats() const {
    std::vector<StageStats> out;
    if (stage_ != nullptr) stage_->AppendStats(&out);
    return out;
  }

  // The last stage, owning the whole chain, or the build error.
  absl::StatusOr<StagePtr<T>> Release() && {
    if (!status_.ok()) return status_;
    return std::move(stage_);
  }

 private:
  template <typename F>
  Pipeline Then(F make) {
    if (!status_.ok()) return Pipeline(status_);
    return Pipeline(make(std::move(stage_)));
  }

  absl::Status status_;
  StagePtr<T> stage_;
};

template <typename T>
Pipeline<T> From(StagePtr<T> stage) {
  return Pipeline<T>(std::move(stage));
}
// From a stage factory's result (absl::StatusOr<StagePtr<T>>): its error
// becomes the pipeline's. (A template over the whole type, so that
// `From<T>(std::make_unique<MyStage>(...))` still picks the overload above.)
template <typename S, typename T = typename S::value_type::element_type::value_type>
Pipeline<T> From(S stage) requires std::same_as<S, absl::StatusOr<StagePtr<T>>> {
  return Pipeline<T>(std::move(stage));
}
template <typename T>
Pipeline<T> FromVector(std::vector<T> items) {
  return Pipeline<T>(VectorSource(std::move(items)));
}
template <typename T>
Pipeline<T> FromGenerator(std::function<absl::StatusOr<std::optional<T>>()> fn) {
  return Pipeline<T>(GeneratorSource<T>(std::move(fn)));
}
inline Pipeline<int64_t> FromRange(int64_t begin, int64_t end, int64_t step = 1) {
  return Pipeline<int64_t>(RangeSource(begin, end, step));
}

}  // namespace dataecho

#endif  // DATAECHO_PIPELINE_H_
