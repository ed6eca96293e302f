// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.h: the umbrella header — every public header of the library.
//
//   #include "dataecho/dataecho.h"
//   auto p = dataecho::FromVector(std::move(items)).Prefetch().Echo({.factor = 2});
#ifndef DATAECHO_DATAECHO_H_
#define DATAECHO_DATAECHO_H_

#include "dataecho/adaptive_echo.h"
#include "dataecho/augment.h"
#include "dataecho/auto_echo.h"
#include "dataecho/batch.h"
#include "dataecho/buffer.h"
#include "dataecho/echo.h"
#include "dataecho/echo_options.h"
#include "dataecho/echo_placement.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/float16.h"
#include "dataecho/formats/crc32c.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/record.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/map.h"
#include "dataecho/pipeline.h"
#include "dataecho/prefetch.h"
#include "dataecho/random_resized_crop.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/fault_store.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/local_store.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/storage/sharding.h"
#include "dataecho/storage/store_options.h"
#include "dataecho/storage/throttled_store.h"
#include "dataecho/tensor.h"
#include "dataecho/throttle.h"
#include "dataecho/version.h"

#endif  // DATAECHO_DATAECHO_H_
