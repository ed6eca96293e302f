// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// libFuzzer target: see SizesTarget() in sizes_target.h.
#include <cstddef>
#include <cstdint>

#include "sizes_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dataecho::fuzz::SizesTarget(data, size);
  return 0;
}
