// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The pipeline-state fuzz target's second half (state_fuzz.cc): arbitrary
// bytes restored into small in-memory pipelines with Zip, Interleave (alone
// and under Echo and Shuffle), Cache, PaddedBatch, AdaptiveEcho, AutoEcho and
// the auto and adaptive echo placements (as they are, and with a valid
// checksum appended so that the stages' own parsers see them); a restored
// pipeline must end (an error or end of stream), never crash or spin.
#ifndef DATAECHO_TESTS_FUZZ_STATE_STAGES_TARGET_H_
#define DATAECHO_TESTS_FUZZ_STATE_STAGES_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/echo_placement.h"
#include "dataecho/pipeline.h"
#include "fuzz_state.h"

namespace dataecho::fuzz {

// Examples of 1 + i % 4 uint8 cells (PaddedBatch pads them), or of 4 when
// not `ragged`, numbered from `first`.
inline std::vector<Example> StateStagesExamples(uint64_t n, uint64_t first = 0,
                                                bool ragged = true) {
  std::vector<Example> out;
  for (uint64_t i = 0; i < n; ++i) {
    const auto len = static_cast<int64_t>(ragged ? 1 + i % 4 : 4);
    MutableBuffer mb(static_cast<size_t>(len));
    for (int64_t j = 0; j < len; ++j) mb.data()[j] = static_cast<uint8_t>(i + j);
    Example e;
    e.components.push_back(*Tensor::Make(DType::kUInt8, {len}, std::move(mb).Freeze()));
    e.source_index = first + i;
    out.push_back(std::move(e));
  }
  return out;
}

inline Pipeline<Batch> StateFuzzPaddedBatches() {
  return FromVector(StateStagesExamples(30))
      .Cache()
      .Repeat(2)
      .AdaptiveEcho({.max_factor = 3, .pool_size = 3, .seed = 1, .replay_decisions = "FRFRRF"})
      .Shuffle({.buffer_size = 6, .seed = 2})
      .PaddedBatch({.batch_size = 4})
      .Echo({.factor = 1.5, .seed = 3, .name = "batch_echo"});
}

inline Pipeline<std::pair<int64_t, int64_t>> StateFuzzPairs() {
  return FromRange(0, 6)
      .Interleave([](int64_t i) { return FromRange(i * 10, i * 10 + i); },
                  {.cycle_length = 3, .block_length = 2})
      .Zip(FromRange(100, 140).Cache())
      .Repeat(2);
}

inline Pipeline<Example> StateFuzzAutoEcho() {
  AutoEchoOptions options;
  options.adaptive = {.max_factor = 3, .pool_size = 2, .seed = 4, .replay_decisions = "FRFF"};
  options.warmup = 4;
  return FromVector(StateStagesExamples(20)).AutoEcho(std::move(options)).Take(40);
}

// Example echo and a shuffle buffer over an Interleave (slots of in-memory sources).
inline Pipeline<Example> StateFuzzInterleavedEcho() {
  return FromRange(0, 4)
      .Interleave(
          [](int64_t i) {
            return FromVector(StateStagesExamples(3 + static_cast<uint64_t>(i),
                                                  100 * static_cast<uint64_t>(i), false));
          },
          {.cycle_length = 2, .block_length = 2})
      .Echo({.factor = 2.5, .seed = 6})
      .Shuffle({.buffer_size = 5, .seed = 7});
}

// The auto echo placement (EchoedBatches, kAuto): the planner's section (its
// decisions, the placed echoes' logs of factor changes) comes first.
inline Pipeline<Batch> StateFuzzAutoPlacement() {
  return EchoedBatches(
      FromVector(StateStagesExamples(32, 0, false)).Prefetch({.depth = 4}),
      [](Example e) -> absl::StatusOr<Example> { return e; },
      {.placement = EchoPlacement::kAuto,
       .shuffle = {.buffer_size = 4, .seed = 2},
       .batch = {.batch_size = 4},
       .prefetch = {.depth = 2},
       .auto_placement = {.max_factor = 3, .pipeline_cores = 1, .decide_every = 2, .seed = 5}});
}

// The adaptive echo placement (EchoedBatches, kAdaptive): the planner's
// section carries the adaptive echo's journal of decisions as well.
inline Pipeline<Batch> StateFuzzAdaptivePlacement() {
  return EchoedBatches(FromVector(StateStagesExamples(32, 0, false)).Prefetch({.depth = 4}),
                       [](Example e) -> absl::StatusOr<Example> { return e; },
                       {.placement = EchoPlacement::kAdaptive,
                        .adaptive = {.max_factor = 3, .pool_size = 4, .seed = 3},
                        .shuffle = {.buffer_size = 4, .seed = 2},
                        .batch = {.batch_size = 4},
                        .prefetch = {.depth = 2},
                        .auto_placement = {.pipeline_cores = 1, .decide_every = 2}});
}

inline void StateStagesTarget(const uint8_t* data, size_t size) {
  for (const std::string& state : StatesOf(data, size)) {
    RestoreAndDrain(StateFuzzPaddedBatches(), state);
    RestoreAndDrain(StateFuzzPairs(), state);
    RestoreAndDrain(StateFuzzAutoEcho(), state);
    RestoreAndDrain(StateFuzzInterleavedEcho(), state);
    RestoreAndDrain(StateFuzzAutoPlacement(), state);
    RestoreAndDrain(StateFuzzAdaptivePlacement(), state);
  }
}

}  // namespace dataecho::fuzz

#endif  // DATAECHO_TESTS_FUZZ_STATE_STAGES_TARGET_H_
