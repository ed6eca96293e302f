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
// snapshot with j <= c (sealed by the producer, StateWriter::Seal: shared, not
// copied, and not checksummed again) and the skip count c - j; RestoreState() restores the
// input from it and pulls and drops c - j input elements: the work that was
// in flight is done again.
//
//   InputSnapshots snaps;
//   // producer, holding the pull lock, after its j-th pull:
//   if (snaps.Due(consumed, NowNanos())) {
//     snaps.Take(j, [&](StateWriter& w) { return input.SaveState(w); });
//   }
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
// So that a restore never yields other data silently, the consumer also
// keeps a fingerprint of each element it took since the base snapshot
// (TakenFingerprints: the CRC-32C of the record it comes from, free for
// TFRecords); the state stores their fold and a restore checks the elements
// it makes again against it (DATA_LOSS if the input's files changed).
//
// Thread safety: thread-safe (an internal mutex); Take() runs the input's
// SaveState outside it.
#ifndef DATAECHO_INTERNAL_INPUT_SNAPSHOTS_H_
#define DATAECHO_INTERNAL_INPUT_SNAPSHOTS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/internal/random.h"
#include "dataecho/internal/ring_queue.h"
#include "dataecho/record.h"

namespace dataecho::internal {

class InputSnapshots {
 public:
  static constexpr int64_t kCostFactor = 100;

  // Forgets every snapshot (a Restart(), a restore): the counts start at 0.
  void Reset() {
    internal::MutexLock lock(&mu_);
    base_.reset();
    pending_.reset();
    last_end_ns_ = 0;
    last_cost_ns_ = 0;
    error_ = absl::OkStatus();
  }

  // Whether the producer should take a snapshot now (`now_ns`: NowNanos()),
  // `consumed` elements having been returned by the consumer.
  bool Due(int64_t consumed, int64_t now_ns) {
    internal::MutexLock lock(&mu_);
    if (!error_.ok()) return false;
    PromoteLocked(consumed);
    if (pending_.has_value()) return false;
    if (base_.has_value() && now_ns - last_end_ns_ < kCostFactor * last_cost_ns_) {
      return false;
    }
    return true;
  }

  // Takes a snapshot at `pulled` pulls: `save(w)` writes the input's state.
  // REQUIRES: the caller holds the input's pull lock (or no producer runs).
  template <typename Save>
  void Take(int64_t pulled, Save save) {
    const int64_t t0 = internal::NowNanos();
    Snapshot snap = TakeSpare();
    snap.pulled = pulled;
    absl::Status s = save(snap.state);
    if (s.ok()) snap.state.Seal();  // encoded and checksummed here, not by each SaveState()
    const int64_t t1 = internal::NowNanos();
    internal::MutexLock lock(&mu_);
    last_end_ns_ = t1;
    last_cost_ns_ = t1 - t0;
    if (!s.ok()) {
      error_ = std::move(s);
      return;
    }
    if (!base_.has_value() || pulled == base_->pulled) {
      ReplaceLocked(base_, std::move(snap));
    } else {
      ReplaceLocked(pending_, std::move(snap));
    }
  }

  // j of the newest snapshot the consumer has passed (0 if none).
  int64_t BasePulled(int64_t consumed) {
    internal::MutexLock lock(&mu_);
    PromoteLocked(consumed);
    return base_.has_value() ? base_->pulled : 0;
  }

  // Writes the newest snapshot with j <= `consumed` into `w` and returns
  // consumed - j; NOT_FOUND if there is none (no producer ran since the
  // last Reset(): the caller saves its input directly), or the error of a
  // failed snapshot.
  absl::StatusOr<int64_t> WriteBase(int64_t consumed, StateWriter& w) {
    internal::MutexLock lock(&mu_);
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
      ReplaceLocked(base_, *std::move(pending_));
      pending_.reset();
    }
  }
  // *slot = snap; what *slot held becomes the spare, whose buffers the next
  // Take() writes into (snapshots in the steady state allocate nothing).
  void ReplaceLocked(std::optional<Snapshot>& slot, Snapshot snap)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (slot.has_value()) spare_ = std::move(slot);
    slot = std::move(snap);
  }
  Snapshot TakeSpare() {
    Snapshot snap;
    {
      internal::MutexLock lock(&mu_);
      if (spare_.has_value()) snap = *std::move(spare_);
      spare_.reset();
    }
    snap.state.Reset();
    return snap;
  }

  internal::Mutex mu_;
  std::optional<Snapshot> base_ ABSL_GUARDED_BY(mu_);     // newest with j <= consumed
  std::optional<Snapshot> pending_ ABSL_GUARDED_BY(mu_);  // at most one beyond it
  std::optional<Snapshot> spare_ ABSL_GUARDED_BY(mu_);    // one replaced, for its buffers
  int64_t last_end_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_cost_ns_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // a failed snapshot
};

// What an element's contents are checked by when it is made again at
// restore: the CRC-32C of the record it comes from (a Record's crc32c if its
// reader has it, an Example's record_crc32c, a Batch's rows_crc32c), 0 for
// elements that do not come from files.
template <typename T>
uint32_t ContentFingerprint(const T& v) {
  if constexpr (std::is_same_v<T, Record>) {
    return v.crc32c.value_or(0);
  } else if constexpr (std::is_same_v<T, Example>) {
    return v.record_crc32c;
  } else if constexpr (std::is_same_v<T, Batch>) {
    return v.rows_crc32c;
  } else {
    (void)v;
    return 0;
  }
}
inline uint32_t FoldFingerprint(uint32_t fold, uint32_t fp) {
  return static_cast<uint32_t>(MixSeed(fold, fp));
}

// The fingerprints of the elements the consumer took, from the base
// snapshot's position on (consumer thread only): a state stores their fold,
// and a restore checks the elements it makes again against it.
class TakenFingerprints {
 public:
  void Add(uint32_t fp) { fps_.push_back(fp); }
  // Elements [0, taken) were taken since the last Reset(); forgets those before `from`.
  void DropBefore(int64_t from) {
    while (first_ < from && !fps_.empty()) {
      fps_.pop_front();
      ++first_;
    }
  }
  // The fold of the fingerprints of elements [from, end) (those kept). A
  // state saved every step asks for the same `from` again and again: the fold
  // goes on from where the last one ended, so a save folds only the elements
  // taken since the last (folding all kept ones was most of a save's time).
  uint32_t Fold(int64_t from) {
    const int64_t start = std::max(from, first_);
    if (start != fold_start_ || fold_end_ < start) {
      fold_start_ = fold_end_ = start;
      fold_ = 0;
    }
    for (auto i = static_cast<size_t>(fold_end_ - first_); i < fps_.size(); ++i) {
      fold_ = FoldFingerprint(fold_, fps_[i]);
    }
    fold_end_ = first_ + static_cast<int64_t>(fps_.size());
    return fold_;
  }
  size_t size() const { return fps_.size(); }
  void Reset() {
    fps_.clear();
    first_ = 0;
    fold_start_ = -1;
  }

 private:
  RingQueue<uint32_t> fps_;
  int64_t first_ = 0;  // the element fps_.front() is the fingerprint of
  // The last Fold(): of elements [fold_start_, fold_end_) (-1: none).
  int64_t fold_start_ = -1, fold_end_ = -1;
  uint32_t fold_ = 0;
};

// Pulls and drops `n` elements of `input` (a restore redoing the work that
// was in flight when the state was saved), checking the fold of their
// fingerprints (`fingerprint(element)`) against `fold`. DATA_LOSS naming
// `stage` if the input ends first or made other elements (its files
// changed); the input's error if it fails.
template <typename S, typename F>
absl::Status SkipInputs(S& input, int64_t n, uint32_t fold, F fingerprint,
                        absl::string_view stage) {
  uint32_t got = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto next = input.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", stage, " must skip ", n,
                                              " input elements, the input ended after ", i));
    }
    got = FoldFingerprint(got, fingerprint(**next));
  }
  if (got != fold) {
    return absl::DataLossError(absl::StrCat(
        "pipeline state: ", stage, ": the ", n,
        " elements made again at restore have other contents than when the state was saved "
        "(their records' CRC-32C differ): the input's files changed"));
  }
  return absl::OkStatus();
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_INPUT_SNAPSHOTS_H_
