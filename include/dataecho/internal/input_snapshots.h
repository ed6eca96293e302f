// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/input_snapshots.h: the symbolic state of a stage whose producer
// runs ahead of its consumer (Prefetch, a parallel Map). Not part of the
// public API.
//
// Read-ahead is not stored. The producer side, right after a pull and while
// it holds the lock under which the input is pulled, takes a *snapshot* of
// its input chain's state (the input's SaveState into a StateWriter of its
// own), tagged with the count j of input elements pulled so far. The
// consumer side counts what it returned (c). SaveState() writes the newest
// snapshot with j <= c and the skip count c - j; RestoreState() restores the
// input from it and pulls and drops c - j input elements: the work that was
// in flight is done again.
//
//   InputSnapshots snaps;
//   // producer, holding the pull lock, after its j-th pull:
//   if (snaps.Due(consumed)) snaps.Take(j, [&](StateWriter& w) { return input.SaveState(w); });
//   // consumer, in SaveState (the producer may be running):
//   absl::StatusOr<int64_t> skip = snaps.WriteBase(consumed, w);
//
// Policy: at most one snapshot pending beyond the consumer; a new one only
// when the previous one has been passed by the consumer and at least
// kCostFactor times the cost of the last snapshot has elapsed since it ended
// (so snapshots take at most about 1 % of the producer's time). A failed
// snapshot (an input that cannot be saved) is kept as the error SaveState()
// returns, and no more are taken.
//
// Thread safety: thread-safe (an internal mutex); Take() runs the input's
// SaveState outside it.
#ifndef DATAECHO_INTERNAL_INPUT_SNAPSHOTS_H_
#define DATAECHO_INTERNAL_INPUT_SNAPSHOTS_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/internal/counter.h"

namespace dataecho::internal {

class InputSnapshots {
 public:
  static constexpr int64_t kCostFactor = 100;

  // Forgets every snapshot (a Restart(), a restore): the counts start at 0.
  void Reset() {
    absl::MutexLock lock(&mu_);
    base_.reset();
    pending_.reset();
    last_end_ns_ = 0;
    last_cost_ns_ = 0;
    error_ = absl::OkStatus();
  }

  // Whether the producer should take a snapshot now, `consumed` elements
  // having been returned by the consumer.
  bool Due(int64_t consumed) {
    absl::MutexLock lock(&mu_);
    if (!error_.ok()) return false;
    PromoteLocked(consumed);
    if (pending_.has_value()) return false;
    if (base_.has_value() && internal::NowNanos() - last_end_ns_ < kCostFactor * last_cost_ns_) {
      return false;
    }
    return true;
  }

  // Takes a snapshot at `pulled` pulls: `save(w)` writes the input's state.
  // REQUIRES: the caller holds the input's pull lock (or no producer runs).
  template <typename Save>
  void Take(int64_t pulled, Save save) {
    const int64_t t0 = internal::NowNanos();
    Snapshot snap;
    snap.pulled = pulled;
    absl::Status s = save(snap.state);
    const int64_t t1 = internal::NowNanos();
    absl::MutexLock lock(&mu_);
    last_end_ns_ = t1;
    last_cost_ns_ = t1 - t0;
    if (!s.ok()) {
      error_ = std::move(s);
      return;
    }
    if (!base_.has_value() || pulled == base_->pulled) {
      base_ = std::move(snap);
    } else {
      pending_ = std::move(snap);
    }
  }

  // Writes the newest snapshot with j <= `consumed` into `w` and returns
  // consumed - j; NOT_FOUND if there is none (no producer ran since the
  // last Reset(): the caller saves its input directly), or the error of a
  // failed snapshot.
  absl::StatusOr<int64_t> WriteBase(int64_t consumed, StateWriter& w) {
    absl::MutexLock lock(&mu_);
    if (!error_.ok()) return error_;
    PromoteLocked(consumed);
    if (!base_.has_value()) return absl::NotFoundError("no snapshot");
    if (base_->pulled > consumed) {
      return absl::InternalError(absl::StrCat("snapshot at ", base_->pulled,
                                              " pulls is ahead of the consumer at ", consumed));
    }
    w.Append(base_->state);
    return consumed - base_->pulled;
  }

 private:
  struct Snapshot {
    int64_t pulled = 0;
    StateWriter state;
  };

  void PromoteLocked(int64_t consumed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (pending_.has_value() && pending_->pulled <= consumed) {
      base_ = std::move(pending_);
      pending_.reset();
    }
  }

  absl::Mutex mu_;
  std::optional<Snapshot> base_ ABSL_GUARDED_BY(mu_);     // newest with j <= consumed
  std::optional<Snapshot> pending_ ABSL_GUARDED_BY(mu_);  // at most one beyond it
  int64_t last_end_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_cost_ns_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // a failed snapshot
};

// Pulls and drops `n` elements of `input` (a restore redoing the work that
// was in flight when the state was saved). DATA_LOSS naming `stage` if the
// input ends first; its error if it fails.
template <typename S>
absl::Status SkipInputs(S& input, int64_t n, absl::string_view stage) {
  for (int64_t i = 0; i < n; ++i) {
    auto next = input.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", stage, " must skip ", n,
                                              " input elements, the input ended after ", i));
    }
  }
  return absl::OkStatus();
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_INPUT_SNAPSHOTS_H_
