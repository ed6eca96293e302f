// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/echo_stage_base.h: what every echo stage has, whatever its policy:
// its input, the seeded per-item draw (internal/echo_draw.h) and the counts
// behind its stats (internal/echo_core.h). Not part of the public API.
//
//   EchoStageBase<T>
//   ├── EchoStage<T>                  fixed factor (echo.h)
//   └── PooledEchoStage<T>            a pool of recent items (pooled_echo_stage.h)
//       ├── AdaptiveEchoStage<T>      repeats only while the upstream stalls
//       └── AutoEchoStage<T>          adaptive for a warm-up, then a fixed factor
//
// The base knows none of its children: a policy lives in its own class.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_INTERNAL_ECHO_STAGE_BASE_H_
#define DATAECHO_INTERNAL_ECHO_STAGE_BASE_H_

#include <cstdint>
#include <utility>

#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/echo_core.h"
#include "dataecho/internal/echo_draw.h"
#include "dataecho/internal/random.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

template <typename T>
class EchoStageBase : public UnaryStage<T, T> {
 protected:
  // REQUIRES: factor finite and >= 1.
  EchoStageBase(StagePtr<T> input, double factor, uint64_t seed)
      : UnaryStage<T, T>(std::move(input), Restarts::kWithInput),
        draw_(factor),
        seed_(seed),
        rng_(seed) {}

  // The copies (or budget) of `item`, the next fresh item: floor(e), or one
  // more with probability e - floor(e). The first item of a newer epoch
  // starts that epoch's draws (StartEpoch()).
  uint32_t DrawCopies(const T& item) {
    if (const uint32_t e = EpochOf(item); e > epoch_) StartEpoch(e);
    return draw_(rng_);
  }
  // Draws from now on come from (seed, epoch); epoch 0 from the seed alone
  // (as without epochs). So the draws of an epoch depend only on the seed and
  // the epoch.
  void StartEpoch(uint32_t epoch) {
    epoch_ = epoch;
    rng_ = Rng(epoch == 0 ? seed_ : MixSeed(seed_, epoch));
  }
  // From now on, draw for `factor` (the generator goes on where it was).
  void SetFactor(double factor) { draw_ = EchoDraw(factor); }

  // The draws' position (checkpoints): the epoch and the generator.
  void SaveDraws(StateWriter& w) const {
    w.U64(epoch_);
    SaveRng(rng_, w);
  }
  void RestoreDraws(StateReader& r) {
    epoch_ = static_cast<uint32_t>(r.U64());
    rng_ = RestoreRng(r);
  }

  // The most copies a draw gives.
  uint32_t max_copies() const { return draw_.whole() + (draw_.fraction() > 0 ? 1 : 0); }

  EchoCounts& counts() { return counts_; }
  const EchoCounts& counts() const { return counts_; }

 private:
  EchoCounts counts_;
  EchoDraw draw_;
  const uint64_t seed_;
  uint32_t epoch_ = 0;  // of the draws
  Rng rng_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ECHO_STAGE_BASE_H_
