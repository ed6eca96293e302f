// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/bind_stage.h: the builder methods whose only arguments are the
// keywords of an option struct (prefetch, echo, shuffle, shard, batch, cache,
// unbatch, ...), bound one way:
//
//   BindStage<CacheOptions>(cls, "cache", "Reads the input once ...",
//                           [](auto p, const CacheOptions& o) { return std::move(p).Cache(o); });
//
// A call reads O from its keywords (options.h) and makes of it what the stage
// is built from (ForStage: the seeds on this thread's seed stream, a shard's
// rank and world size resolved), so that a bad option raises before the
// pipeline is consumed; then f(Pipeline<T>, that) makes the new pipeline, for
// any element type T (f raises ThrowWrongElement for a type it does not
// take; OnlyOn). Given `length`, the new handle's length is length(self.length(),
// that) (length.h); without, the builder call keeps it as LengthAfter() says.
#ifndef DATAECHO_PYTHON_SRC_BIND_STAGE_H_
#define DATAECHO_PYTHON_SRC_BIND_STAGE_H_

#include <memory>
#include <type_traits>
#include <utility>

#include "dataecho/storage/sharding.h"
#include "options.h"
#include "py_pipeline.h"
#include "seed_stream.h"
#include "signature.h"
#include "status.h"

namespace dataecho::python {

// `options` with its seeds on this thread's seed stream (seed_stream.h).
template <typename O>
O ForStage(O options) {
  if constexpr (requires { options.seed; }) options.seed = ForSeedStream(options.seed);
  if constexpr (requires { options.adaptive.seed; }) {
    options.adaptive.seed = ForSeedStream(options.adaptive.seed);
  }
  return options;
}

// The shard of this worker: the options' rank and world size, or the
// launcher's environment (ResolveShard).
inline Shard ForStage(const ShardOptions& options) { return ValueOrThrow(ResolveShard(options)); }

// f as a builder function that takes pipelines of In elements only: for
// Pipeline<In>, f(pipeline, rest...); for any other element type, TypeError
// naming `method` (ThrowWrongElement), followed by `record_hint` for Records
// and by `hint` for the other types.
template <typename In, typename F>
auto OnlyOn(const char* method, F f, const char* record_hint = "", const char* hint = "") {
  return [=](auto p, const auto&... rest) -> AnyPipeline {
    using T = typename decltype(p)::value_type;
    if constexpr (std::is_same_v<T, In>) {
      return f(std::move(p), rest...);
    } else {
      ThrowWrongElement(method, ElementName<In>(), ElementName<T>(),
                        std::is_same_v<T, Record> ? record_hint : hint);
    }
  };
}

// The `length` of a BindStage that keeps the length.
struct KeepLength {};

template <typename O, typename F, typename L = KeepLength>
void BindStage(PipelineClass& cls, const char* name, const char* summary, F f, L length = {}) {
  DefSigned(cls, Signature(name).Arg("self").Options<O>(), summary,
            [name, f, length](PipelineHandle& self, const py::kwargs& kwargs) {
              const auto built_from = ForStage(Spec<O>().FromKwargs(kwargs, name));
              std::shared_ptr<PipelineHandle> out = Then(
                  self, name, [&](auto p) -> AnyPipeline { return f(std::move(p), built_from); });
              if constexpr (!std::is_same_v<L, KeepLength>) {
                out->set_length(length(self.length(), built_from));
              }
              return out;
            });
}

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_BIND_STAGE_H_
