// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo_placement.h"

#include <atomic>
#include <memory>
#include <utility>

#include "fmt/format.h"

namespace dataecho {

std::string_view EchoPlacementName(EchoPlacement placement) {
  switch (placement) {
    case EchoPlacement::kBeforeAugment: return "before_augment";
    case EchoPlacement::kAfterAugment: return "after_augment";
    case EchoPlacement::kBatch: return "batch";
    case EchoPlacement::kAdaptive: return "adaptive";
  }
  return "?";
}

absl::StatusOr<EchoPlacement> ParseEchoPlacement(std::string_view name) {
  for (EchoPlacement placement : kEchoPlacements) {
    if (name == EchoPlacementName(placement)) return placement;
  }
  return absl::InvalidArgumentError(fmt::format(
      "echo placement must be before_augment, after_augment, batch or adaptive, got '{}'", name));
}

Pipeline<Batch> EchoedBatches(Pipeline<Example> decoded, AugmentFn augment,
                              EchoedBatchesOptions options) {
  auto augmented = [&](Pipeline<Example> p) -> Pipeline<Example> {
    if (!augment) return p;
    return std::move(p).Map(augment, options.augment);
  };
  auto batched = [&](Pipeline<Example> p) {
    return std::move(p).Shuffle(options.shuffle).Batch(options.batch);
  };
  Pipeline<Batch> batches(absl::InvalidArgumentError(
      fmt::format("unknown echo placement {}", static_cast<int>(options.placement))));
  switch (options.placement) {
    case EchoPlacement::kBeforeAugment:
      batches = batched(augmented(std::move(decoded).Echo(options.echo)));
      break;
    case EchoPlacement::kAfterAugment:
      batches = batched(augmented(std::move(decoded)).Echo(options.echo));
      break;
    case EchoPlacement::kBatch:
      batches = batched(augmented(std::move(decoded))).Echo(options.echo);
      break;
    case EchoPlacement::kAdaptive: {
      // Right after the boundary, whose TryNext says whether a fresh item is
      // ready. The gate: repeat only while few batches wait for the consumer,
      // not whenever the queues downstream have room.
      if (options.prefetch.level == nullptr)
        options.prefetch.level = std::make_shared<std::atomic<int64_t>>(0);
      if (!options.adaptive.repeat_gate && options.gate_below > 0) {
        options.adaptive.repeat_gate = [level = options.prefetch.level, n = options.gate_below] {
          return level->load(std::memory_order_relaxed) < n;
        };
      }
      batches = batched(augmented(std::move(decoded).AdaptiveEcho(std::move(options.adaptive))));
      break;
    }
  }
  return std::move(batches).Prefetch(std::move(options.prefetch));
}

}  // namespace dataecho
