// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// make_pipeline.h: the free functions that make a Pipeline<T> (pipeline.h):
// from a vector, a generator or a range of integers, and from other
// pipelines (read round-robin, mixed with weights, or zipped). Included by
// pipeline.h. (From(), a pipeline from its first stage, is in builder.h.)
//
//   auto examples = dataecho::FromVector(std::move(items));       // Pipeline<Example>
//   auto indices = dataecho::FromRange(0, 1000);                  // Pipeline<int64_t>
//   auto pairs = dataecho::Zip(std::move(examples), std::move(indices));
//   auto mixed = dataecho::Mix(std::move(pipelines), {.weights = {0.7, 0.3}});
//   auto records = dataecho::From(dataecho::MakeTFRecordSource(store, uris));  // a StatusOr
//
// Thread safety: each call consumes its arguments; the pipeline it returns is
// as pipeline.h says.
#ifndef DATAECHO_MAKE_PIPELINE_H_
#define DATAECHO_MAKE_PIPELINE_H_

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/interleave.h"
#include "dataecho/mix.h"
#include "dataecho/pipeline.h"
#include "dataecho/source.h"
#include "dataecho/stage.h"
#include "dataecho/zip.h"

namespace dataecho {

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
// Pipelines of the same type, read round-robin (interleave.h): cycle_length of
// them open at a time, block_length elements from each in turn.
template <typename T>
Pipeline<T> Interleave(std::vector<Pipeline<T>> pipelines, InterleaveStageOptions options = {}) {
  return FromVector(std::move(pipelines))
      .Interleave([](Pipeline<T> p) { return p; }, std::move(options));
}
// Pipelines of the same type mixed with weights: each element drawn from
// one of them (mix.h). They are consumed; the first build error among them
// is the mix's.
template <typename T>
Pipeline<T> Mix(std::vector<Pipeline<T>> pipelines, MixOptions options = {}) {
  std::vector<StagePtr<T>> stages;
  for (Pipeline<T>& p : pipelines) {
    absl::StatusOr<StagePtr<T>> s = std::move(p).Release();
    if (!s.ok()) return Pipeline<T>(s.status());
    stages.push_back(*std::move(s));
  }
  return Pipeline<T>(MixStage<T>::Make(std::move(stages), std::move(options)));
}
// a.Zip(b) (zip.h).
template <typename A, typename B>
Pipeline<std::pair<A, B>> Zip(Pipeline<A> a, Pipeline<B> b, ZipOptions options = {}) {
  return std::move(a).Zip(std::move(b), std::move(options));
}

}  // namespace dataecho

#endif  // DATAECHO_MAKE_PIPELINE_H_
