// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The placed echo stages of auto placement and their clocks
// (internal/auto_placement.h).
#include <sched.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"

#include "dataecho/element_traits.h"
#include "dataecho/internal/echo_stage_base.h"
#include "dataecho/internal/stage_accounting.h"
#include "internal/auto_placement.h"

namespace dataecho::internal {
namespace {

constexpr const char* kPlacedNames[] = {"echo:before_augment", "echo:after_augment", "echo:batch"};

template <typename T>
class PlacedEchoStage final : public EchoStageBase<T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  PlacedEchoStage(StagePtr<T> input, std::shared_ptr<EchoControl> control, int slot, uint64_t seed)
      : EchoStageBase<T>(std::move(input), 1.0, seed),
        control_(std::move(control)),
        slot_(slot),
        seed_(seed) {}

  Result Next() override {
    SampleCpu();
    return this->NextBackToBack([this] { return this->EmitCopy(); },
                                [this](const Result& r) { AcceptFresh(r); }, [](int64_t) {});
  }

  // (A Prefetch above pulls with TryNext first: a synchronous input builds
  // the batch right there.)
  bool TryNext(Result* out) override {
    SampleCpu();
    return this->TryNextBackToBack(
        out, [this] { return this->EmitCopy(); }, [this](const Result& r) { AcceptFresh(r); });
  }

 protected:
  // State: the draws, the factor in effect, the fresh items taken (the
  // position the planner's log of factor changes counts in), the copies left
  // of the current item and a reference to it.
  std::string StateName() const override { return kPlacedNames[slot_]; }
  uint64_t StateOptionsHash() const override {
    return OptionsHash().Add(seed_).Add(static_cast<int64_t>(slot_)).value();
  }
  absl::Status SaveOwn(StateWriter& w) override {
    this->SaveDraws(w);
    w.Double(factor_.load(std::memory_order_relaxed));
    w.U64(static_cast<uint64_t>(position_));
    return this->SaveCopies(w);
  }
  absl::Status RestoreOwn(StateReader& r) override {
    this->RestoreDraws(r);
    const double factor = r.Double();
    const uint64_t position = r.U64();
    if (!r.status().ok()) return r.status();
    const std::string name = kPlacedNames[slot_];
    if (!(factor >= 1 && factor <= kMaxEchoFactor) || position > kMaxStatePosition) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", name, " has factor ", factor,
                                              " at fresh item ", position));
    }
    this->SetFactor(factor);
    factor_.store(factor, std::memory_order_relaxed);
    if (absl::Status s = this->RestoreCopies(r, name); !s.ok()) return s;
    position_ = static_cast<int64_t>(position);
    control_->taken[slot_].store(position_, std::memory_order_release);
    {  // The decisions to replay (the planner's state, restored before this stage).
      absl::MutexLock lock(&control_->log_mu);
      replay_until_ = control_->replay_until[slot_];
      replay_ = control_->changes[slot_];
    }
    return absl::OkStatus();
  }

  StageStats OwnStats() const override {
    return this->counts().ToStats(kPlacedNames[slot_],
                                  {{"factor", factor_.load(std::memory_order_relaxed)}});
  }

 private:
  // The batch echo runs on the thread that builds the batches: its CPU so far.
  void SampleCpu() {
    if (slot_ == kPlacedBatch)
      control_->downstream_cpu_ns.store(ThreadCpuNanos(), std::memory_order_relaxed);
  }

  void AcceptFresh(const Result& r) {
    if (!r.ok() || !r->has_value()) return;
    const T& item = **r;
    const int64_t bytes = this->CountFresh(item);
    control_->fresh[slot_].fetch_add(1, std::memory_order_relaxed);
    control_->fresh_bytes[slot_].fetch_add(bytes, std::memory_order_relaxed);
    if constexpr (std::is_same_v<T, Batch>) {
      control_->rows_built.fetch_add(item.num_rows, std::memory_order_relaxed);
    }
    const int64_t n = position_;
    const double e = FactorAt(n);
    if (e != factor_.load(std::memory_order_relaxed)) {
      if (n >= replay_until_) {  // a decision taken now: logged (a replayed one is there)
        absl::MutexLock lock(&control_->log_mu);
        control_->changes[slot_].push_back({.fresh = n, .factor = e});
      }
      this->SetFactor(e);
      factor_.store(e, std::memory_order_relaxed);
    }
    position_ = n + 1;
    control_->taken[slot_].store(position_, std::memory_order_release);
    // A copy is never copied again: around a switch of placement, copies the
    // old placement made pass the new one once, so an item gets at most the
    // old factor plus the new one, never their product.
    this->HoldCopies(item, ElementTraits<T>::FreshCount(item) == ElementTraits<T>::ItemCount(item)
                               ? this->DrawCopies(item)
                               : 1);
  }

  // The factor for the fresh item `n`: before the position the restored
  // state was saved at, the one the log says was in effect (a replay);
  // afterwards the planner's.
  double FactorAt(int64_t n) const {
    if (n < replay_until_) {
      double e = factor_.load(std::memory_order_relaxed);
      for (const EchoControl::FactorChange& c : replay_) {
        if (c.fresh > n) break;
        if (c.fresh == n) e = c.factor;
      }
      return e;
    }
    return control_->factor[slot_].load(std::memory_order_relaxed);
  }

  const std::shared_ptr<EchoControl> control_;
  const int slot_;
  const uint64_t seed_;
  std::atomic<double> factor_{1.0};
  int64_t position_ = 0;  // fresh items taken
  // After a restore: the logged factor changes, replayed below replay_until_.
  int64_t replay_until_ = 0;
  std::vector<EchoControl::FactorChange> replay_;
};

}  // namespace

int AvailableCpus() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return 1;
  return std::max(1, CPU_COUNT(&cpus));
}

StagePtr<Example> MakePlacedEcho(StagePtr<Example> input, std::shared_ptr<EchoControl> control,
                                 int slot, uint64_t seed) {
  return std::make_unique<PlacedEchoStage<Example>>(std::move(input), std::move(control), slot,
                                                    seed);
}

StagePtr<Batch> MakePlacedEcho(StagePtr<Batch> input, std::shared_ptr<EchoControl> control,
                               uint64_t seed) {
  return std::make_unique<PlacedEchoStage<Batch>>(std::move(input), std::move(control),
                                                  kPlacedBatch, seed);
}

}  // namespace dataecho::internal
