// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The placed echo stages of auto placement and their clocks
// (internal/auto_placement.h).
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "dataecho/element_traits.h"
#include "dataecho/internal/echo_stage_base.h"
#include "dataecho/internal/stage_accounting.h"
#include "internal/auto_placement.h"

namespace dataecho::internal {
namespace {

int64_t ClockNanos(clockid_t clock) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

constexpr const char* kPlacedNames[] = {"echo:before_augment", "echo:after_augment", "echo:batch"};

template <typename T>
class PlacedEchoStage final : public EchoStageBase<T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  PlacedEchoStage(StagePtr<T> input, std::shared_ptr<EchoControl> control, int slot, uint64_t seed)
      : EchoStageBase<T>(std::move(input), 1.0, seed), control_(std::move(control)), slot_(slot) {}

  Result Next() override {
    if (this->cancelled()) return CancelledError();
    SampleCpu();
    if (remaining_ > 0) return EmitRepeat();
    Result r;
    if (const int64_t waited = PullTimed(this->input(), &r); waited > 0)
      this->counts().AddInputWait(waited);
    AcceptFresh(r);
    return r;
  }

  // (A Prefetch above pulls with TryNext first: a synchronous input builds
  // the batch right there.)
  bool TryNext(Result* out) override {
    SampleCpu();
    if (this->cancelled()) {
      *out = CancelledError();
    } else if (remaining_ > 0) {
      *out = EmitRepeat();
    } else {
      if (!this->input().TryNext(out)) return false;
      AcceptFresh(*out);
    }
    return true;
  }

  absl::Status EnableRestart() override { return this->input().EnableRestart(); }
  absl::Status Restart(uint32_t epoch) override {
    if (absl::Status s = this->input().Restart(epoch); !s.ok()) return s;
    current_.reset();
    remaining_ = 0;
    this->StartEpoch(epoch);
    return absl::OkStatus();
  }

 protected:
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

  Result EmitRepeat() {
    --remaining_;
    const uint32_t k = ++repeat_;
    this->counts().AddRepeat(current_bytes_);
    ElementTraits<T>::MarkRepeat(*current_, k);
    if (remaining_ > 0) return Result(absl::in_place, *current_);
    return Result(absl::in_place, *std::move(current_));
  }

  void AcceptFresh(const Result& r) {
    if (!r.ok() || !r->has_value()) return;
    const T& item = **r;
    current_bytes_ = static_cast<int64_t>(ElementTraits<T>::ByteSize(item));
    this->counts().AddFresh(current_bytes_);
    control_->fresh[slot_].fetch_add(1, std::memory_order_relaxed);
    control_->fresh_bytes[slot_].fetch_add(current_bytes_, std::memory_order_relaxed);
    if constexpr (std::is_same_v<T, Batch>) {
      control_->rows_built.fetch_add(item.num_rows, std::memory_order_relaxed);
    }
    const double e = control_->factor[slot_].load(std::memory_order_relaxed);
    if (e != factor_.load(std::memory_order_relaxed)) {
      this->SetFactor(e);
      factor_.store(e, std::memory_order_relaxed);
    }
    // A copy is never copied again: around a switch of placement, copies the
    // old placement made pass the new one once, so an item gets at most the
    // old factor plus the new one, never their product.
    remaining_ = ElementTraits<T>::FreshCount(item) == ElementTraits<T>::ItemCount(item)
                     ? this->DrawCopies(item) - 1
                     : 0;
    repeat_ = 0;
    if (remaining_ > 0) current_.emplace(item);
  }

  const std::shared_ptr<EchoControl> control_;
  const int slot_;
  std::atomic<double> factor_{1.0};
  std::optional<T> current_;
  uint32_t remaining_ = 0;
  uint32_t repeat_ = 0;
  int64_t current_bytes_ = 0;
};

}  // namespace

int64_t ThreadCpuNanos() { return ClockNanos(CLOCK_THREAD_CPUTIME_ID); }
int64_t ProcessCpuNanos() { return ClockNanos(CLOCK_PROCESS_CPUTIME_ID); }

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
