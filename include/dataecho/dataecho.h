// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.h: the umbrella header — every public header of the library.
//
// The stages' headers (echo.h, shuffle.h, unbatch.h, ...) come through
// pipeline.h, which includes each stage its builder makes: a new stage is
// added there, not here. (A program that builds pipelines of records,
// examples and batches compiles faster with builder.h and the headers of
// what it reads: builder.h.) Every other public header is listed below. The
// packaging check (tests/packaging/check_headers.cmake) fails for a public
// header that this file does not reach, directly or through what it includes.
//
//   #include "dataecho/dataecho.h"
//   auto p = dataecho::FromVector(std::move(items)).Prefetch().Echo({.factor = 2});
#ifndef DATAECHO_DATAECHO_H_
#define DATAECHO_DATAECHO_H_

#include "dataecho/augment.h"
#include "dataecho/buffer.h"
#include "dataecho/checkpoint.h"
#include "dataecho/checkpoint_dir.h"
#include "dataecho/crc32c.h"
#include "dataecho/dtype.h"
#include "dataecho/echo_diagnostics.h"
#include "dataecho/echo_options.h"
#include "dataecho/echo_placement.h"
#include "dataecho/echo_planner.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/float16.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/range_source.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/loss_feedback.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/memory.h"
#include "dataecho/mix_options.h"
#include "dataecho/pipeline.h"
#include "dataecho/pipeline_iterator.h"
#include "dataecho/random_resized_crop.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_kit.h"
#include "dataecho/stats.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/epoch_plan.h"
#include "dataecho/storage/fault_store.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/local_store.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/storage/sharding.h"
#include "dataecho/storage/store_options.h"
#include "dataecho/storage/throttled_store.h"
#include "dataecho/tensor.h"
#include "dataecho/text.h"
#include "dataecho/trace.h"
#include "dataecho/version.h"

#endif  // DATAECHO_DATAECHO_H_
