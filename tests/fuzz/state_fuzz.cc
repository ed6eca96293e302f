// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// libFuzzer target: see StateTarget() in fuzz_targets.h and
// StateStagesTarget() in state_stages_target.h (the stages with more inputs,
// a pool or a cache).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"
#include "state_stages_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dataecho::fuzz::StateTarget(data, size);
  dataecho::fuzz::StateStagesTarget(data, size);
  return 0;
}
