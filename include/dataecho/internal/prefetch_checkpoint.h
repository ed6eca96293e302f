// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/prefetch_checkpoint.h: the checkpoint side of a Prefetch
// (prefetch.h, "Checkpoints"): the queue is not stored. The producer pulls
// its input under a lock (the pull lock, which SaveRefs/Reread take too) and
// keeps a snapshot of the input's state taken after j pulls
// (internal/input_snapshots.h); SaveInput() writes the newest snapshot the
// consumer has passed, SaveOwn() the count of elements it took since and
// their fingerprint fold, which RestoreOwn() pulls again from the input and
// drops. Not part of the public API.
//
//   internal::PrefetchCheckpoint<T> cp;
//   cp.Start(input);                              // consumer: before the producer starts
//   bool end = cp.PullRun(input, want, run, ...);  // producer: a run of pulls, then a snapshot
//   cp.Took(element);                             // consumer: an element returned
//
// Thread safety: PullRun() is the producer's; SaveRefs() and Reread() are
// thread-safe; the rest the consumer's, with Reset() and RestoreOwn() only
// while no producer runs.
#ifndef DATAECHO_INTERNAL_PREFETCH_CHECKPOINT_H_
#define DATAECHO_INTERNAL_PREFETCH_CHECKPOINT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/internal/prefetch_handoff.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

template <typename T>
class PrefetchCheckpoint {
 public:
  // The base snapshot: the input as the producer finds it (no pull yet).
  void Start(Stage<T>& input) {
    snapshots_.Take(0, [&input](StateWriter& w) { return input.SaveState(w); });
  }

  // REQUIRES: no producer runs.
  void Reset() {
    snapshots_.Reset();
    consumed_.store(0, std::memory_order_relaxed);
    pulled_ = 0;
    taken_fps_.Reset();
  }

  // References are the input's: taken under the pull lock (the producer may be pulling).
  absl::Status SaveRefs(Stage<T>& input, std::span<const T* const> items, StateWriter& w) {
    absl::MutexLock lock(&input_mu_);
    return input.SaveRefs(items, w);
  }
  absl::Status Reread(Stage<T>& input, StateReader& r, size_t n, std::vector<T>* out) {
    absl::MutexLock lock(&input_mu_);
    return input.Reread(r, n, out);
  }

  // The producer pulls a run of up to `want` elements into `run`, each under
  // the pull lock; the run ends early at the end of stream or an error (then
  // its last item, and PullRun returns true), at a slow pull (kFastPullNanos)
  // or after kRunNanos (internal/prefetch_handoff.h). `start` and `t` are when
  // it started and ended, `blocked` the time blocked on the input. Unless at
  // the end, it then takes a snapshot of the input, under the pull lock, if
  // one is due.
  bool PullRun(Stage<T>& input, size_t want, std::vector<absl::StatusOr<std::optional<T>>>& run,
               int64_t& start, int64_t& t, int64_t& blocked) {
    start = NowNanos();
    t = start;
    blocked = 0;
    bool end = false;
    while (run.size() < want) {
      absl::StatusOr<std::optional<T>> item;
      {
        absl::MutexLock pull_lock(&input_mu_);
        blocked += PullTimed(input, &item);
        if (item.ok() && item->has_value()) ++pulled_;
      }
      run.push_back(std::move(item));
      const int64_t now = NowNanos();
      const int64_t waited = now - t;  // the pull, blocked or not
      t = now;
      if (!run.back().ok() || !run.back()->has_value()) {
        end = true;
        break;
      }
      if (waited >= PrefetchHandoff::kFastPullNanos || now - start >= PrefetchHandoff::kRunNanos) {
        break;
      }
    }
    if (!end && snapshots_.Due(consumed_.load(std::memory_order_relaxed))) {
      absl::MutexLock pull_lock(&input_mu_);
      snapshots_.Take(pulled_, [&input](StateWriter& w) { return input.SaveState(w); });
    }
    return end;
  }

  // The consumer returned `v`.
  void Took(const T& v) {
    const int64_t consumed = consumed_.load(std::memory_order_relaxed);
    consumed_.store(consumed + 1, std::memory_order_relaxed);
    taken_fps_.Add(ContentFingerprint(v));
    if (taken_fps_.size() > kFingerprintsKept) {
      taken_fps_.DropBefore(snapshots_.BasePulled(consumed + 1));
    }
  }

  // The input's state: the newest snapshot the consumer has passed (or, with
  // no producer running, the input's own), and the elements taken since.
  absl::Status SaveInput(bool started, Stage<T>& input, StateWriter& w) {
    if (!started) {
      save_skip_ = 0;
      save_fold_ = 0;
      return input.SaveState(w);
    }
    const int64_t consumed = consumed_.load(std::memory_order_relaxed);
    absl::StatusOr<int64_t> skip = snapshots_.WriteBase(consumed, w);
    if (!skip.ok()) return skip.status();
    save_skip_ = *skip;
    taken_fps_.DropBefore(consumed - *skip);
    save_fold_ = taken_fps_.Fold(consumed - *skip);
    return absl::OkStatus();
  }
  absl::Status SaveOwn(StateWriter& w) {
    w.U64(static_cast<uint64_t>(save_skip_));
    w.Fixed32(save_fold_);
    return absl::OkStatus();
  }
  // Pulls again what the consumer had taken after the snapshot, and drops it.
  absl::Status RestoreOwn(StateReader& r, Stage<T>& input, const std::string& name) {
    const uint64_t skip = r.U64();
    const uint32_t fold = r.Fixed32();
    if (!r.status().ok()) return r.status();
    if (skip > kMaxSkip) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", name, " skips ", skip, " elements"));
    }
    Reset();
    return SkipInputs(
        input, static_cast<int64_t>(skip), fold, [](const T& v) { return ContentFingerprint(v); },
        name);
  }

 private:
  // A state's skip count above this is corrupt (and would spin over a Repeat).
  static constexpr uint64_t kMaxSkip = uint64_t{1} << 32;
  // Fingerprints kept before older ones are dropped (those before the base snapshot).
  static constexpr size_t kFingerprintsKept = 4096;

  absl::Mutex input_mu_;  // the pull lock
  // pulled_ (producer only) counts the input elements pulled, consumed_
  // (written by the consumer) the elements returned, both since the producer
  // last started from a known position (a restore, a Restart, the start).
  int64_t pulled_ = 0;
  std::atomic<int64_t> consumed_{0};
  InputSnapshots snapshots_;
  TakenFingerprints taken_fps_;  // consumer thread
  int64_t save_skip_ = 0;        // consumer thread: between SaveInput and SaveOwn
  uint32_t save_fold_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_PREFETCH_CHECKPOINT_H_
