// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/pooled_echo_stage.h: the echo stages that repeat from a pool of
// recent items (adaptive_echo.h, auto_echo.h). Not part of the public API.
//
// A request is served in one of two ways, chosen by the child per request
// (BackToBack()):
//   adaptive:      a fresh item if the input has one ready, else a repeat of
//                  the pooled item emitted fewest times (if the demand gate
//                  and min_fresh_fraction allow), else a wait for the input;
//   back to back:  the copies of the newest item, then a wait for the next
//                  fresh one (EchoStage's order).
// Recorded decisions (AdaptiveEchoOptions::replay_decisions) come first in
// both. The decisions and figures themselves are AdaptiveEchoCore's
// (internal/echo_core.h, src/internal/echo_core.cc); this template holds what
// touches elements: the input, the pool, the sticky end.
//
// Checkpoints (docs/checkpoint.md): the state is the decisions taken so far
// (their count: a replay of recorded decisions goes on after them), the
// draws, whether the input ended, the policy's own part (auto echo's fixed
// factor) and the pool: each entry's emissions and budget and a reference to
// its item. Timing is not state: a restored stage decides from its own
// timing, so "the same output" after a restore needs the decisions replayed:
// with a journal (internal::MakeAdaptiveEcho in adaptive_echo.h,
// internal/decision_journal.h)
// the stage replays those it took after its state was saved, as the journal
// restored by a stage above its Prefetch says.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_INTERNAL_POOLED_ECHO_STAGE_H_
#define DATAECHO_INTERNAL_POOLED_ECHO_STAGE_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/echo_options.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/internal/decision_journal.h"
#include "dataecho/internal/echo_core.h"
#include "dataecho/internal/echo_pool.h"
#include "dataecho/internal/echo_stage_base.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

template <typename T>
class PooledEchoStage : public EchoStageBase<T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  Result Next() override {
    Result out;
    Step(/*may_block=*/true, &out);
    return out;
  }

  // Ready unless serving the request would mean waiting for the upstream.
  bool TryNext(Result* out) override { return Step(/*may_block=*/false, out); }

 protected:
  // A new epoch (stage.h: after the input's): the pool empties (its items were
  // of the last epoch), draws restart from (seed, epoch); the policy's state
  // (R̂, auto echo's factor) stays.
  absl::Status OnRestart(uint32_t epoch) override {
    pool_.Reset(pool_.capacity());
    core_.OnPoolCleared();
    terminal_.reset();
    this->StartEpoch(epoch);
    return absl::OkStatus();
  }

  // REQUIRES: options.Validate() is OK. Budgets are drawn for max_factor.
  // `journal`: see the file comment (null: none).
  PooledEchoStage(StagePtr<T> input, AdaptiveEchoOptions options,
                  std::shared_ptr<DecisionJournal> journal = nullptr)
      : EchoStageBase<T>(std::move(input), options.max_factor, options.seed),
        pool_(static_cast<size_t>(options.pool_size)),
        core_(std::move(options), std::move(journal)) {}

  // The policy, asked at every request that is not answered by the cancel or
  // the sticky end: serve it back to back (true) or adaptively (false).
  virtual bool BackToBack() = 0;

  // From now on, budgets (copies) are drawn for `factor`; the pool keeps only
  // the newest item (for back-to-back serving) and drops what it holds.
  void FixFactor(double factor) {
    this->SetFactor(factor);
    pool_.Reset(1);
    core_.OnPoolCleared();
  }

  const AdaptiveEchoCore& core() const { return core_; }
  // Elements emitted so far, all epochs, restored with the state.
  uint64_t decisions() const { return decisions_; }

  // The stage's name in states and stats.
  virtual const std::string& OwnName() const { return core_.options().name; }
  // The options that change the output, for the state's shape.
  virtual void HashOptions(OptionsHash& h) const {
    const AdaptiveEchoOptions& o = core_.options();
    h.Add(o.max_factor).Add(o.pool_size).Add(o.seed).Add(o.min_fresh_fraction);
  }
  // The policy's own part of the state (auto echo: its fixed factor).
  virtual void SavePolicy(StateWriter& /*w*/) const {}
  virtual absl::Status RestorePolicy(StateReader& r) { return r.status(); }

 private:
  // State (stage.h's shape): the input's, then this stage's section (see the
  // file comment).
  std::string StateName() const override { return OwnName(); }
  uint64_t StateOptionsHash() const override {
    OptionsHash h;
    HashOptions(h);
    return h.value();
  }
  absl::Status SaveOwn(StateWriter& w) override {
    if (terminal_.has_value() && !terminal_->ok())
      return CannotSaveAfterError(OwnName(), terminal_->status());
    SavePolicy(w);
    this->SaveDraws(w);
    w.U64(decisions_);
    // Behind a Prefetch, what this stage decides from here on may have to be
    // decided again at a restore: the snapshot holding this state keeps the
    // journal from here on.
    if (const auto& journal = core_.journal(); journal != nullptr)
      w.KeepAlive(journal->Anchor(decisions_));
    w.Bool(terminal_.has_value());
    const std::vector<std::pair<uint32_t, uint32_t>> counts = pool_.counts();
    w.U64(counts.size());
    for (auto [emitted, budget] : counts) {
      w.U64(emitted);
      w.U64(budget);
    }
    return this->input().SaveRefs(pool_.items(), w);
  }
  absl::Status RestoreOwn(StateReader& r) override {
    DATAECHO_RETURN_IF_ERROR(RestorePolicy(r));  // may fix the factor (and shrink the pool)
    this->RestoreDraws(r);
    const uint64_t decisions = r.U64();
    const bool ended = r.Bool();
    const uint64_t pooled = r.Count(2);
    DATAECHO_RETURN_IF_ERROR(r.status());
    const auto most = static_cast<uint64_t>(std::ceil(core_.options().max_factor));
    if (pooled > pool_.capacity()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", OwnName(), " has ", pooled,
                                              " items pooled, at most ", pool_.capacity()));
    }
    std::vector<std::pair<uint32_t, uint32_t>> counts;
    for (uint64_t i = 0; i < pooled; ++i) {
      const uint64_t emitted = r.U64();
      const uint64_t budget = r.U64();
      DATAECHO_RETURN_IF_ERROR(r.status());
      if (emitted < 1 || emitted >= budget || budget > most) {
        return absl::DataLossError(absl::StrCat("pipeline state: ", OwnName(),
                                                " has an item emitted ", emitted, " times of ",
                                                budget, " (max_factor ", most, ")"));
      }
      counts.emplace_back(static_cast<uint32_t>(emitted), static_cast<uint32_t>(budget));
    }
    std::vector<T> items;
    DATAECHO_RETURN_IF_ERROR(this->input().Reread(r, pooled, &items));
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (items.size() != pooled) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", OwnName(), "'s pool not read again"));
    }
    pool_.Restore(std::move(items), counts);
    core_.OnPooled(false, pool_.size());
    decisions_ = decisions;
    core_.SeekReplay(decisions_);
    if (const auto& journal = core_.journal(); journal != nullptr) {
      absl::StatusOr<std::string> replay = journal->ReplayFrom(decisions_, OwnName());
      DATAECHO_RETURN_IF_ERROR(replay.status());
      journal->RestartAt(decisions_);
      if (!replay->empty()) core_.ReplayFromHere(*std::move(replay));
    }
    if (ended) terminal_ = Result(std::nullopt);
    return absl::OkStatus();
  }

  bool Step(bool may_block, Result* out) {
    return Begin(out) || Serve(may_block, BackToBack(), out);
  }

  // What every request starts with: true (and *out set) if the stage is
  // cancelled or has ended; otherwise starts R̂ at the first request.
  bool Begin(Result* out) {
    if (this->cancelled()) {
      *out = CancelledError();
      return true;
    }
    if (terminal_.has_value()) {
      *out = *terminal_;
      return true;
    }
    core_.StartOnce();
    return false;
  }

  // Serves one request (after Begin()); false if it would have to wait and
  // !may_block.
  bool Serve(bool may_block, bool back_to_back, Result* out) {
    if (core_.replaying()) return Replay(may_block, out);
    if (back_to_back) {
      if (!pool_.empty()) {
        internal::AssignInPlace(out, [&] { return EmitRepeat(pool_.TakeNewest()); });
        return true;
      }
      return Fresh(may_block, out);
    }
    Result r;
    if (this->input().TryNext(&r)) {
      internal::AssignInPlace(out, [&] { return AcceptFresh(std::move(r)); });
      return true;
    }
    const AdaptiveEchoCore::Action action = core_.WithoutFresh(pool_.empty(), this->counts());
    if (action == AdaptiveEchoCore::Action::kRepeat) {
      internal::AssignInPlace(out, [&] { return EmitRepeat(pool_.TakeFewest()); });
      return true;
    }
    if (!may_block) return false;
    core_.CountWait(action);
    if (action == AdaptiveEchoCore::Action::kGateClosed) return GatedWait(out);
    return Fresh(may_block, out);
  }

  bool Replay(bool may_block, Result* out) {
    if (core_.ReplayWantsFresh()) {
      if (!Fresh(may_block, out)) return false;
      core_.ReplayStep();
      return true;
    }
    if (pool_.empty()) {
      terminal_ = core_.ReplayMismatch();
      *out = *terminal_;
      return true;
    }
    core_.ReplayStep();
    internal::AssignInPlace(out, [&] { return EmitRepeat(pool_.TakeFewest()); });
    return true;
  }

  // The demand gate is closed and a repeat is possible: poll for a fresh item
  // until one is ready or the gate opens.
  bool GatedWait(Result* out) {
    const int64_t t0 = core_.Now();
    while (true) {
      core_.SleepGatePoll();
      if (this->cancelled()) {
        *out = CancelledError();
        return true;
      }
      Result r;
      if (this->input().TryNext(&r)) {
        core_.OnGateWaited(core_.Now() - t0, this->counts());
        internal::AssignInPlace(out, [&] { return AcceptFresh(std::move(r)); });
        return true;
      }
      if (core_.GateOpen()) {
        internal::AssignInPlace(out, [&] { return EmitRepeat(pool_.TakeFewest()); });
        return true;
      }
    }
  }

  // Takes the next fresh item, waiting for it if may_block.
  bool Fresh(bool may_block, Result* out) {
    Result r;
    if (!this->input().TryNext(&r)) {  // a synchronous input computes: no wait
      if (!may_block) return false;
      const int64_t t0 = core_.Now();
      r = this->input().Next();
      core_.OnWaited(core_.Now() - t0, this->counts());
    }
    internal::AssignInPlace(out, [&] { return AcceptFresh(std::move(r)); });
    return true;
  }

  Result AcceptFresh(Result r) {
    if (!r.ok() || !r->has_value()) {
      // CANCELLED comes from our own Cancel(); every other end stays.
      if (!this->cancelled()) terminal_ = r;
      return r;
    }
    ++decisions_;
    core_.OnFresh(static_cast<int64_t>(ElementTraits<T>::ByteSize(**r)), this->counts());
    const bool evicted = pool_.Add(**r, this->DrawCopies(**r));
    core_.OnPooled(evicted, pool_.size());
    return r;
  }

  Result EmitRepeat(T out) {
    ++decisions_;
    core_.OnRepeat(static_cast<int64_t>(ElementTraits<T>::ByteSize(out)), pool_.size(),
                   this->counts());
    return Result(std::move(out));
  }

  EchoPool<T> pool_;
  AdaptiveEchoCore core_;
  std::optional<Result> terminal_;  // end of stream or the input's error (sticky)
  uint64_t decisions_ = 0;          // elements emitted (fresh or repeat), all epochs
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_POOLED_ECHO_STAGE_H_
