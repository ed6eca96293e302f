// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.h: the umbrella header — every public header of the library.
//
//   #include "dataecho/dataecho.h"
//   auto p = dataecho::FromVector(std::move(items)).Prefetch().Echo({.factor = 2});
#ifndef DATAECHO_DATAECHO_H_
#define DATAECHO_DATAECHO_H_

#include "dataecho/adaptive_echo.h"
#include "dataecho/auto_echo.h"
#include "dataecho/batch.h"
#include "dataecho/buffer.h"
#include "dataecho/echo.h"
#include "dataecho/example.h"
#include "dataecho/float16.h"
#include "dataecho/map.h"
#include "dataecho/object_store.h"
#include "dataecho/pipeline.h"
#include "dataecho/prefetch.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"
#include "dataecho/tensor.h"
#include "dataecho/throttle.h"

#endif  // DATAECHO_DATAECHO_H_
