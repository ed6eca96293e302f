// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// pipeline.h: the fluent pipeline builder (builder.h) with every stage's
// definition, for pipelines of any element type.
//
// builder.h declares Pipeline<T> and its calls (the usage is there); the
// library compiles the stages of pipelines of Record, Example and Batch, so a
// program that builds only those needs builder.h alone. This header adds the
// stages themselves (map.h, prefetch.h, echo.h, shuffle.h, batch.h, ...), the
// builder's members for any T, and the free functions that make pipelines
// (make_pipeline.h: FromVector(), FromGenerator(), FromRange(), Interleave(),
// Mix(), Zip()). Include it for pipelines of your own element types (or of
// numbers, or Zip's pairs), a Map between other types than builder.h lists,
// and Interleave:
//
//   #include "dataecho/pipeline.h"
//   struct Token { int64_t id; };  // with an ElementTraits<Token> (element_traits.h)
//   auto tokens = dataecho::FromVector(std::move(ids))
//                     .Map([](int64_t id) { return Token{id}; })
//                     .Shuffle({.buffer_size = 1024, .seed = 1});
//
// Thread safety: as builder.h says.
#ifndef DATAECHO_PIPELINE_H_
#define DATAECHO_PIPELINE_H_

#include "dataecho/adaptive_echo.h"
#include "dataecho/auto_echo.h"
#include "dataecho/batch.h"
#include "dataecho/builder.h"  // IWYU pragma: export
#include "dataecho/cache.h"
#include "dataecho/echo.h"
#include "dataecho/filter.h"
#include "dataecho/interleave.h"
#include "dataecho/map.h"
#include "dataecho/padded_batch.h"
#include "dataecho/prefetch.h"
#include "dataecho/repeat.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "dataecho/throttle.h"
#include "dataecho/zip.h"

namespace dataecho::internal {

// Every stage is defined here, for every element type (builder.h).
template <typename... Ts>
struct StagesDefinedFor {};

}  // namespace dataecho::internal

// The members of Pipeline<T> defined out of the class, and the stage
// factories builder.h declares.
#include "dataecho/internal/pipeline_members.h"  // IWYU pragma: export

// From(), FromVector(), FromGenerator(), FromRange(); Interleave(), Mix(),
// Zip() over pipelines.
#include "dataecho/make_pipeline.h"  // IWYU pragma: export

#endif  // DATAECHO_PIPELINE_H_
