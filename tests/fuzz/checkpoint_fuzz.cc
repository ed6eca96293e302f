// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// libFuzzer target: see CheckpointTarget() in fuzz_targets.h.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dataecho::fuzz::CheckpointTarget(data, size);
  return 0;
}
