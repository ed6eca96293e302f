// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// adaptive_echo.h: adaptive data echoing — repeat only while the upstream stalls.
//
// A fixed echo factor (echo.h) is a guess. Adaptive echo repeats exactly as
// much as the upstream's slowness requires. Each time the consumer asks:
//
//   1. a fresh item is ready upstream (a non-blocking TryNext() across the
//      prefetch boundary) -> emit it fresh;
//   2. otherwise, some recent item is eligible -> emit a repeat of it: of the
//      pooled items, the one emitted fewest times so far (the oldest among
//      equals), so repeats spread evenly;
//   3. otherwise -> wait in the input's Next() for the next fresh item.
//
// No item is emitted more than `max_factor` (m) times in total, the fresh
// emission included. For a fractional m each item's budget is floor(m) or
// floor(m) + 1, drawn per item from the seeded generator exactly as EchoStage
// draws its copies (so the budgets match EchoStage's copy counts for the same
// seed). The pool keeps the `pool_size` (k) most recent items with budget
// left: an item leaves when its budget is used up or, when a new item arrives
// and the pool is full, because it is the oldest ("evicted").
//
// DEMAND GATE. Behind a queue (a Prefetch after the Batch, as trainers use),
// "the consumer asks" means the queue's producer asks, and it asks as fast as
// it can until the queue is full, so step 2 would repeat items the trainer
// does not need yet. `repeat_gate` ties repeats to the trainer's real demand:
// a repeat is emitted only while the gate returns true; while it is closed the
// stage waits for a fresh item instead, checking the input and the gate every
// `gate_poll`. With PrefetchOptions::level the gate can watch the trainer's
// queue:
//
//   auto level = std::make_shared<std::atomic<int64_t>>(0);
//   auto p = std::move(upstream)                                  // ends in a Prefetch
//       .AdaptiveEcho({.max_factor = 4, .pool_size = 256,
//                      .repeat_gate = [level] { return level->load() < 2; }})
//       .Map(Augment).Shuffle({.buffer_size = 2048}).Batch({.batch_size = 128})
//       .Prefetch({.depth = 4, .level = level});                  // repeat only below 2 batches
//
// With the upstream faster than the consumer, every element is fresh (the
// realized factor is 1); with the upstream R times slower, the realized factor
// approaches min(R, m) and the consumer waits only when nothing is eligible.
// End of stream and errors pass through as soon as the input returns them
// (items still pooled are not repeated then) and stay.
//
// Place it after a Prefetch boundary (stage.h: Prefetch implements TryNext):
//
//   auto p = dataecho::FromVector(std::move(examples))
//       .Map(Decode, {.parallelism = 4})
//       .Prefetch({.depth = 64})                                   // the boundary
//       .AdaptiveEcho({.max_factor = 4, .pool_size = 256, .seed = 1})
//       .Shuffle({.buffer_size = 10000, .seed = 2});
//   // batch echoing: ... .Batch({.batch_size = 256}).Prefetch({.depth = 8})
//   //                    .AdaptiveEcho({.max_factor = 3, .pool_size = 4})
//
// TIMING DEPENDENCE. This is the one stage whose output depends on thread
// timing, not only on its seed and input: which requests are served fresh
// depends on when the upstream's items become ready. To reproduce a run for
// debugging, record its decisions (`record_decisions`: one 'F' or 'R' per
// emitted element) and replay them (`replay_decisions`): the replaying stage
// waits for a fresh item at every 'F' and repeats at every 'R', so with the
// same input and seed it emits the same elements whatever the timing. (Or use
// a fixed factor: EchoStage, or AutoEchoStage (auto_echo.h), is deterministic after
// its warm-up.)
//
// Stats: "fresh", "repeats", elements (emitted), "realized_factor" = emitted /
// fresh, "repeat_fraction" = repeats / emitted (requests served by repeats),
// "rate_ratio" = R̂, the moving estimate of (upstream time per fresh item) /
// (consumer time per element) (see internal/echo_core.h; about 1 while the
// upstream keeps up, 0 until `rate_window` fresh items arrived; the consumer's
// time is the time between its requests minus the time this stage waited, so
// when the consumer is a queue's producer (a Prefetch later in the pipeline)
// that the upstream starves even with m-fold echoing, R̂ overstates R: it is
// then > m as R is, and clamp(R̂, 1, m) is still min(R, m)), "stalls" =
// waits with no eligible item, "floor_waits" = waits forced by
// min_fresh_fraction, "evicted" = items that left the full pool with budget
// left, "pooled" = items in the pool, "gate_waits" = requests that waited for
// a fresh item because the demand gate was closed; input_wait = time blocked
// on the input.
//
// CHECKPOINTS (docs/checkpoint.md). The state holds the decisions taken so
// far (their count), the draws and the pool (each item's emissions, budget
// and a reference to it), not the timing: a restored stage emits the same
// elements for the same decisions. Restored with the recorded decisions as
// `replay_decisions`, it goes on after the ones already taken, exactly as
// the original run did; otherwise it decides from its own timing.
//
// AutoEchoStage (auto_echo.h) echoes like this stage for a warm-up, then fixes
// the factor at clamp(R̂, 1, m). Both are PooledEchoStages
// (internal/pooled_echo_stage.h); the options are in echo_options.h.
//
// Thread safety: as every stage (stage.h). `record_decisions` is written from
// the consumer thread.
#ifndef DATAECHO_ADAPTIVE_ECHO_H_
#define DATAECHO_ADAPTIVE_ECHO_H_

#include <optional>
#include <utility>

#include "dataecho/echo_options.h"
#include "dataecho/export.h"
#include "dataecho/internal/pooled_echo_stage.h"
#include "dataecho/memory.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"

namespace dataecho {
namespace internal {

// AdaptiveEchoStage::Make, recording the decisions into `journal` (null:
// nowhere), for checkpoints behind a Prefetch (internal/decision_journal.h):
// what EchoedBatches' kAdaptive placement makes.
template <typename T>
absl::StatusOr<StagePtr<T>> MakeAdaptiveEcho(StagePtr<T> input, AdaptiveEchoOptions options,
                                             std::shared_ptr<DecisionJournal> journal);

}  // namespace internal

template <typename T>
class AdaptiveEchoStage final : public internal::PooledEchoStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, AdaptiveEchoOptions options) {
    return internal::MakeAdaptiveEcho<T>(std::move(input), std::move(options), nullptr);
  }

 protected:
  bool BackToBack() override { return false; }  // always adaptive

  StageStats OwnStats() const override {
    return this->core().Stats(this->core().options().name, this->counts());
  }

 private:
  friend absl::StatusOr<StagePtr<T>> internal::MakeAdaptiveEcho<T>(
      StagePtr<T> input, AdaptiveEchoOptions options,
      std::shared_ptr<internal::DecisionJournal> journal);

  AdaptiveEchoStage(StagePtr<T> input, AdaptiveEchoOptions options,
                    std::shared_ptr<internal::DecisionJournal> journal)
      : internal::PooledEchoStage<T>(std::move(input), std::move(options), std::move(journal)) {}
};

namespace internal {

template <typename T>
absl::StatusOr<StagePtr<T>> MakeAdaptiveEcho(StagePtr<T> input, AdaptiveEchoOptions options,
                                             std::shared_ptr<DecisionJournal> journal) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  // The pool may fill up to pool_size items: refuse one beyond memory.
  if (absl::Status s =
          CheckMemoryEstimate(options.name, "pool_size", options.pool_size, sizeof(T), 0, "");
      !s.ok())
    return s;
  return StagePtr<T>(
      new AdaptiveEchoStage<T>(std::move(input), std::move(options), std::move(journal)));
}

}  // namespace internal

// AdaptiveEchoStage for the library's element types are compiled once, in
// src/adaptive_echo.cc: programs link them instead of compiling them again. Other
// types are instantiated where they are used, as usual.
extern template class DATAECHO_EXPORT AdaptiveEchoStage<Example>;
extern template class DATAECHO_EXPORT AdaptiveEchoStage<Batch>;

}  // namespace dataecho

#endif  // DATAECHO_ADAPTIVE_ECHO_H_
