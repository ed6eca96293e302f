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
#include "dataecho/crc32c.h"
#include "dataecho/echo.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/fault_store.h"
#include "dataecho/fixed_length.h"
#include "dataecho/float16.h"
#include "dataecho/glob.h"
#include "dataecho/idx.h"
#include "dataecho/image_record.h"
#include "dataecho/jpeg.h"
#include "dataecho/local_store.h"
#include "dataecho/map.h"
#include "dataecho/object_store.h"
#include "dataecho/pipeline.h"
#include "dataecho/prefetch.h"
#include "dataecho/record.h"
#include "dataecho/record_source.h"
#include "dataecho/sharding.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"
#include "dataecho/store_options.h"
#include "dataecho/tensor.h"
#include "dataecho/tfrecord.h"
#include "dataecho/throttle.h"
#include "dataecho/throttled_store.h"
#include "dataecho/version.h"

#endif  // DATAECHO_DATAECHO_H_
