// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fuzz_state.h: what the pipeline-state fuzz targets (StateTarget() in
// fuzz_targets.h, StateStagesTarget() in state_stages_target.h) share: the
// input as states, and the restore that must end.
#ifndef DATAECHO_TESTS_FUZZ_FUZZ_STATE_H_
#define DATAECHO_TESTS_FUZZ_FUZZ_STATE_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "dataecho/crc32c.h"
#include "dataecho/pipeline.h"

namespace dataecho::fuzz {

// The fuzz input as pipeline states: as it is, and with a valid checksum
// appended, so that the stages' own parsers see it.
inline std::vector<std::string> StatesOf(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string fixed = input;
  const uint32_t crc = MaskCrc32c(Crc32c(fixed));
  for (int i = 0; i < 4; ++i) fixed.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return {input, fixed};
}

// Restores `p` from `state` and drains it: the restore fails, or the pipeline
// ends (an error or the end of the stream). Aborts if it gives more elements
// than it holds: a restored state that spins.
template <typename T>
void RestoreAndDrain(Pipeline<T> p, std::string_view state) {
  if (!p.RestoreState(state).ok()) return;
  for (int i = 0; i < 100000; ++i) {
    auto next = p.Next();
    if (!next.ok() || !next->has_value()) return;
  }
  std::abort();
}

}  // namespace dataecho::fuzz

#endif  // DATAECHO_TESTS_FUZZ_FUZZ_STATE_H_
