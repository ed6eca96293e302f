// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/echo_stage_base.h: the one echo engine, whatever the policy: its
// input, the seeded per-item draw (internal/echo_draw.h), the counts behind
// its stats (internal/echo_core.h), the references of its copies (a copy is
// its input's element with a repeat index), its epochs, and the back-to-back
// copies of the newest fresh item with their part of the state. Not part of
// the public API.
//
//   EchoStageBase<T>
//   ├── EchoStage<T>                  fixed factor (echo.h), back to back
//   ├── PlacedEchoStage<T>            the factor auto placement sets
//   │                                 (src/internal/placed_echo.cc), back to back
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
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/echo_core.h"
#include "dataecho/internal/echo_draw.h"
#include "dataecho/internal/random.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

template <typename T>
class EchoStageBase : public UnaryStage<T, T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  // References: the repeat index, then the input's reference.
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    for (const T* v : items) w.U64(RepeatIndexOf(*v));
    return this->input().SaveRefs(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    std::vector<uint32_t> repeats(n);
    for (uint32_t& k : repeats) k = static_cast<uint32_t>(r.U64());
    if (!r.status().ok()) return r.status();
    const size_t first = out->size();
    if (absl::Status s = this->input().Reread(r, n, out); !s.ok()) return s;
    for (size_t i = 0; i < n && first + i < out->size(); ++i) {
      if (repeats[i] > 0) ElementTraits<T>::MarkRepeat((*out)[first + i], repeats[i]);
    }
    return absl::OkStatus();
  }

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

  // BACK TO BACK (EchoStage, the placed echo): the copies of the newest fresh
  // item are emitted right after it, before the next one is pulled.
  //
  // Their Next(): a pending copy (emit_copy()), else the input's next element
  // (its wait, if it blocked, counted and passed to on_wait(nanos)), passed
  // to accept(result) before it is returned.
  template <typename EmitCopy, typename Accept, typename OnWait>
  Result NextBackToBack(EmitCopy emit_copy, Accept accept, OnWait on_wait) {
    if (this->cancelled()) return CancelledError();
    if (copies_pending()) return emit_copy();
    return PullFresh(accept, on_wait);
  }
  // The input's next element, passed to accept(result). One return of one
  // named value: built in the caller's, not moved (see Pipeline::PullFromStage).
  template <typename Accept, typename OnWait>
  Result PullFresh(Accept& accept, OnWait& on_wait) {
    Result r;
    // Only a real wait is timed: a clock read costs as much as a copy here.
    if (const int64_t waited = PullTimed(this->input(), &r); waited > 0) {
      counts_.AddInputWait(waited);
      on_wait(waited);
    }
    accept(r);
    return r;
  }
  // Their TryNext(): ready when a copy is pending or the input has an
  // element ready (passed to accept(result)).
  template <typename EmitCopy, typename Accept>
  bool TryNextBackToBack(Result* out, EmitCopy emit_copy, Accept accept) {
    if (this->cancelled()) {
      *out = CancelledError();
    } else if (copies_pending()) {
      internal::AssignInPlace(out, [&] { return emit_copy(); });
    } else {
      if (!this->input().TryNext(out)) return false;
      accept(*out);
    }
    return true;
  }
  // A new epoch (stage.h: after the input's): no copies pending, draws from
  // (seed, epoch).
  absl::Status OnRestart(uint32_t epoch) override {
    StartOver(epoch);
    return absl::OkStatus();
  }
  bool copies_pending() const { return remaining_ > 0; }
  // The next copy of the held item. REQUIRES: copies_pending().
  Result EmitCopy() {
    --remaining_;
    const uint32_t k = ++repeat_;
    counts_.AddRepeat(current_bytes_);
    // Each copy is built right in the returned value (no element to move
    // from: a move of an Example costs a few ns, as much as the rest here).
    ElementTraits<T>::MarkRepeat(*current_, k);
    if (remaining_ > 0) return Result(absl::in_place, *current_);
    // The last copy is the held item itself.
    return Result(absl::in_place, *std::move(current_));
  }
  // Counts `item`, just pulled, as fresh; returns its bytes.
  int64_t CountFresh(const T& item) {
    current_bytes_ = static_cast<int64_t>(ElementTraits<T>::ByteSize(item));
    counts_.AddFresh(current_bytes_);
    return current_bytes_;
  }
  // `copies` emissions of `item` in all: it, then copies - 1 copies back to
  // back. REQUIRES: copies >= 1.
  void HoldCopies(const T& item, uint32_t copies) {
    remaining_ = copies - 1;
    repeat_ = 0;
    if (remaining_ > 0)
      current_.emplace(item);  // (a copy construction costs less than an assignment)
  }
  // A new epoch: no copies pending, draws from (seed, epoch).
  void StartOver(uint32_t epoch) {
    current_.reset();
    remaining_ = 0;
    StartEpoch(epoch);
  }
  // The copies' part of the state: the copies left, the repeat index of the
  // last one and a reference to the item (read again at restore).
  absl::Status SaveCopies(StateWriter& w) {
    w.U64(remaining_);
    w.U64(repeat_);
    if (remaining_ == 0) return absl::OkStatus();
    const T* item = &*current_;
    return this->input().SaveRefs(std::span<const T* const>(&item, 1), w);
  }
  // DATA_LOSS naming `name` for more copies than the factor gives (call after
  // the factor is restored) or an item not read again.
  absl::Status RestoreCopies(StateReader& r, std::string_view name) {
    remaining_ = static_cast<uint32_t>(r.U64());
    repeat_ = static_cast<uint32_t>(r.U64());
    current_.reset();
    if (!r.status().ok()) return r.status();
    if (uint64_t{remaining_} + repeat_ >= max_copies()) {
      return absl::DataLossError(internal::StrCat("pipeline state: ", name, " has ", remaining_,
                                                  " copies left after ", repeat_));
    }
    if (remaining_ == 0) return absl::OkStatus();
    std::vector<T> item;
    if (absl::Status s = this->input().Reread(r, 1, &item); !s.ok()) return s;
    if (!r.status().ok()) return r.status();
    if (item.size() != 1)
      return absl::DataLossError(
          internal::StrCat("pipeline state: ", name, "'s item not read again"));
    current_.emplace(std::move(item[0]));
    ElementTraits<T>::MarkRepeat(*current_, repeat_);
    current_bytes_ = static_cast<int64_t>(ElementTraits<T>::ByteSize(*current_));
    return absl::OkStatus();
  }

 private:
  EchoCounts counts_;
  EchoDraw draw_;
  const uint64_t seed_;
  uint32_t epoch_ = 0;  // of the draws
  Rng rng_;
  // Back to back.
  std::optional<T> current_;  // the item being repeated
  uint32_t remaining_ = 0;    // copies of current_ still to emit
  uint32_t repeat_ = 0;       // repeat index of the last copy emitted
  int64_t current_bytes_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ECHO_STAGE_BASE_H_
