// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "seed_stream.h"

#include <utility>

#include "dataecho/augment.h"

namespace dataecho::python {
namespace {

thread_local std::optional<uint64_t> stream;
thread_local std::optional<EchoPlannerMemory> planner_memory;

// Keeps the mix apart from MixSeed(seed, epoch) and the other uses of MixSeed.
constexpr uint64_t kStreamSalt = 0x5eed5eed;

}  // namespace

void SetSeedStream(std::optional<uint64_t> s) { stream = s; }

uint64_t ForSeedStream(uint64_t seed) {
  return stream.has_value() ? MixSeed(seed, *stream, kStreamSalt) : seed;
}

void SetPlannerMemory(std::optional<EchoPlannerMemory> memory) {
  planner_memory = std::move(memory);
}

const std::optional<EchoPlannerMemory>& PlannerMemory() { return planner_memory; }

}  // namespace dataecho::python
