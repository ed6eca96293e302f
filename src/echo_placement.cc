// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo_placement.h"

#include <atomic>
#include <memory>
#include <utility>

#include "dataecho/augment.h"
#include "dataecho/internal/auto_placement.h"
#include "fmt/format.h"

namespace dataecho {

std::string_view EchoPlacementName(EchoPlacement placement) {
  switch (placement) {
    case EchoPlacement::kBeforeAugment: return "before_augment";
    case EchoPlacement::kAfterAugment: return "after_augment";
    case EchoPlacement::kBatch: return "batch";
    case EchoPlacement::kAdaptive: return "adaptive";
    case EchoPlacement::kAuto: return "auto";
  }
  return "?";
}

absl::StatusOr<EchoPlacement> ParseEchoPlacement(std::string_view name) {
  for (EchoPlacement placement : kEchoPlacements) {
    if (name == EchoPlacementName(placement)) return placement;
  }
  return absl::InvalidArgumentError(fmt::format(
      "echo placement must be before_augment, after_augment, batch, adaptive or auto, got '{}'", name));
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
    case EchoPlacement::kAuto: {
      if (absl::Status s = options.auto_placement.Validate(); !s.ok()) return Pipeline<Batch>(s);
      auto control = std::make_shared<internal::EchoControl>();
      control->augment_inline = options.augment.parallelism == 0;
      const uint64_t seed = options.auto_placement.seed;
      auto place = [&](Pipeline<Example> p, int slot, uint64_t s) {
        return std::move(p).Apply([&](StagePtr<Example> in) {
          return internal::MakePlacedEcho(std::move(in), control, slot, s);
        });
      };
      if (augment) {  // metered: thread CPU around every 8th call
        augment = [fn = std::move(augment), control](Example e) -> absl::StatusOr<Example> {
          const int64_t n = control->augment_calls.fetch_add(1, std::memory_order_relaxed);
          if (n % 8 != 0) return fn(std::move(e));
          const int64_t t0 = internal::ThreadCpuNanos();
          absl::StatusOr<Example> out = fn(std::move(e));
          control->augment_sampled_cpu_ns.fetch_add(internal::ThreadCpuNanos() - t0,
                                                    std::memory_order_relaxed);
          control->augment_sampled.fetch_add(1, std::memory_order_relaxed);
          return out;
        };
      }
      Pipeline<Example> before = place(std::move(decoded), internal::kPlacedBefore, seed);
      Pipeline<Example> after =
          place(augmented(std::move(before)), internal::kPlacedAfter, MixSeed(seed, 1));
      batches = batched(std::move(after)).Apply([&](StagePtr<Batch> in) {
        return internal::MakePlacedEcho(std::move(in), control, MixSeed(seed, 2));
      });
      return std::move(batches)
          .Prefetch(std::move(options.prefetch))
          .Apply([&](StagePtr<Batch> in) {
            return internal::MakeEchoPlanner(std::move(in), control,
                                             std::move(options.auto_placement));
          });
    }
  }
  return std::move(batches).Prefetch(std::move(options.prefetch));
}

}  // namespace dataecho
