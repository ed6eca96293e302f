// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo_placement.h"

#include <atomic>
#include <memory>
#include <utility>

#include "dataecho/augment.h"
#include "dataecho/echo_diagnostics.h"
#include "enum_names.h"
#include "fmt/format.h"
#include "internal/auto_placement.h"

namespace dataecho {

namespace {
constexpr internal::EnumNames<EchoPlacement, 5> kEchoPlacementNames{
    "echo placement", {"before_augment", "after_augment", "batch", "adaptive", "auto"}};
}  // namespace

std::string_view EchoPlacementName(EchoPlacement placement) {
  return kEchoPlacementNames.Name(placement);
}

absl::StatusOr<EchoPlacement> ParseEchoPlacement(std::string_view name) {
  return kEchoPlacementNames.Parse(name);
}

namespace {

// `fn` with its thread CPU time measured around every 8th call (the
// planner's augmentation cost, internal/auto_placement.h).
AugmentFn Metered(AugmentFn fn, std::shared_ptr<internal::EchoControl> control) {
  return [fn = std::move(fn), control = std::move(control)](Example e) -> absl::StatusOr<Example> {
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

}  // namespace

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
      // not whenever the queues downstream have room; and (regime-aware, the
      // planner at the top) only up to the factor where copies made before
      // the augmentation stop raising the step rate: beyond it, the copies go
      // past the augmentation, as whole batches.
      if (absl::Status s = options.adaptive.Validate(); !s.ok()) return Pipeline<Batch>(s);
      if (options.prefetch.level == nullptr)
        options.prefetch.level = std::make_shared<std::atomic<int64_t>>(0);
      auto control = std::make_shared<internal::EchoControl>();
      control->augment_inline = options.augment.parallelism == 0;
      control->journal = std::make_shared<internal::DecisionJournal>();
      if (!options.adaptive.repeat_gate && options.gate_below > 0) {
        options.adaptive.repeat_gate = [level = options.prefetch.level, n = options.gate_below,
                                        control] {
          return level->load(std::memory_order_relaxed) < n && control->RepeatBeforeAllowed();
        };
      } else if (options.adaptive.repeat_gate) {
        options.adaptive.repeat_gate = [gate = std::move(options.adaptive.repeat_gate), control] {
          return gate() && control->RepeatBeforeAllowed();
        };
      } else {
        options.adaptive.repeat_gate = [control] { return control->RepeatBeforeAllowed(); };
      }
      if (augment) augment = Metered(std::move(augment), control);
      AutoPlacementOptions planner = options.auto_placement;
      planner.max_factor = options.adaptive.max_factor;
      planner.seed = MixSeed(options.adaptive.seed, 2);
      if (absl::Status s = planner.Validate(); !s.ok()) return Pipeline<Batch>(s);
      const std::string above_boundary = options.adaptive.name;
      auto echoed = std::move(decoded).Apply([&](StagePtr<Example> in) {
        return internal::MakeAdaptiveEcho(std::move(in), std::move(options.adaptive),
                                          control->journal);
      });
      batches = batched(augmented(std::move(echoed))).Apply([&](StagePtr<Batch> in) {
        return internal::MakePlacedEcho(std::move(in), control, planner.seed);
      });
      return std::move(batches)
          .Prefetch(std::move(options.prefetch))
          .Apply([&](StagePtr<Batch> in) {
            return internal::MakeEchoPlanner(std::move(in), control, std::move(planner),
                                             internal::PlannerMode::kAdaptive, above_boundary);
          });
    }
    case EchoPlacement::kAuto: {
      if (absl::Status s = options.auto_placement.Validate(); !s.ok()) return Pipeline<Batch>(s);
      auto control = std::make_shared<internal::EchoControl>();
      control->augment_inline = options.augment.parallelism == 0;
      control->decode = options.decode_parallelism;
      const uint64_t seed = options.auto_placement.seed;
      auto place = [&](Pipeline<Example> p, int slot, uint64_t s) {
        return std::move(p).Apply([&](StagePtr<Example> in) {
          return internal::MakePlacedEcho(std::move(in), control, slot, s);
        });
      };
      if (augment) augment = Metered(std::move(augment), control);
      Pipeline<Example> before = place(std::move(decoded), internal::kPlacedBefore, seed);
      Pipeline<Example> after =
          place(augmented(std::move(before)), internal::kPlacedAfter, MixSeed(seed, 1));
      batches = batched(std::move(after)).Apply([&](StagePtr<Batch> in) {
        return internal::MakePlacedEcho(std::move(in), control, MixSeed(seed, 2));
      });
      return std::move(batches)
          .Prefetch(std::move(options.prefetch))
          .Apply([&](StagePtr<Batch> in) {
            return internal::MakeEchoPlanner(
                std::move(in), control, std::move(options.auto_placement),
                internal::PlannerMode::kPlacement, "echo:before_augment");
          });
    }
  }
  batches = std::move(batches).Prefetch(std::move(options.prefetch));
  if (options.diagnostics) return WithEchoDiagnostics(std::move(batches));
  return batches;
}

}  // namespace dataecho
