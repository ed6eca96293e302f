// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/snapshotted_input.h: the input of a stage whose threads run ahead
// of its consumer (Prefetch, a parallel Map), as checkpoints see it
// (docs/checkpoint.md). What was read ahead is not stored. Producers pull
// under one lock (the pull lock, which SaveRefs/Reread take too), a run at a
// time, and after a run take a snapshot of the input's state when one is due
// (internal/input_snapshots.h); the consumer counts what it took and folds
// their fingerprints. SaveInput() writes the newest snapshot the consumer has
// passed, SaveOwn() the count taken since and their fold, which RestoreOwn()
// pulls again from the input, checks and drops. Not part of the public API.
//
//   internal::SnapshottedInput<T> in;
//   in.Start(input);                                   // before producers start
//   in.PullRun(input, {.want = 8}, values, terminal);  // a producer: a run of pulls
//   in.Took(ContentFingerprint(v));                    // the consumer returned v
//
// Thread safety: PullRun(), SaveRefs() and Reread() are thread-safe (the pull
// lock); Took(), SaveInput() and SaveOwn() are the consumer's; Start(),
// Reset() and RestoreOwn() only while no producer runs.
#ifndef DATAECHO_INTERNAL_SNAPSHOTTED_INPUT_H_
#define DATAECHO_INTERNAL_SNAPSHOTTED_INPUT_H_

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
#include "dataecho/checkpoint.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"

namespace dataecho::internal {

template <typename T>
class SnapshottedInput {
 public:
  using Item = absl::StatusOr<std::optional<T>>;

  // How a run of pulls ends (besides the end of the stream or an error).
  struct Run {
    size_t want = 1;                   // at most this many elements
    int64_t max_ns = INT64_MAX;        // ... or once it took this long
    int64_t slow_pull_ns = INT64_MAX;  // ... or after a pull this slow
    bool snapshot = true;              // a snapshot after it, if due
  };
  struct RunTimes {
    int64_t ns = 0;       // the run, blocked or not
    int64_t blocked = 0;  // blocked on an input that had nothing ready
  };

  internal::Mutex& pull_mu() ABSL_LOCK_RETURNED(pull_mu_) { return pull_mu_; }

  // The base snapshot: the input as the producers find it (no pull yet).
  void Start(Stage<T>& input) {
    snapshots_.Take(0, [&input](StateWriter& w) { return input.SaveState(w); });
  }
  // The counts start at 0 (a Restart(), a restore).
  void Reset() {
    snapshots_.Reset();
    consumed_.store(0, std::memory_order_relaxed);
    pulled_ = 0;
    taken_fps_.Reset();
  }

  // Pulls a run into `values`, holding the pull lock; the end of the stream
  // or an error goes to `terminal` and ends it. `under_lock(values,
  // terminal, times)` runs before the lock is let go (a Map numbers its
  // inputs there, in the order they were pulled).
  template <typename UnderLock>
  RunTimes PullRun(Stage<T>& input, const Run& run, std::vector<T>& values,
                   std::optional<Item>& terminal, UnderLock under_lock) {
    RunTimes times;
    internal::MutexLock lock(&pull_mu_);
    const int64_t start = NowNanos();
    int64_t t = start;
    size_t since = 0;  // pulls since the clock was last read
    while (values.size() < run.want) {
      Item in;
      times.blocked += PullTimed(input, &in);
      if (!in.ok() || !in->has_value()) {
        terminal = std::move(in);
        t = NowNanos();
        break;
      }
      values.push_back(**std::move(in));
      ++pulled_;
      ++since;
      // The clock after the first pull and every fourth: a run ends once
      // pulls take slow_pull_ns each, or it has taken max_ns.
      if (values.size() != 1 && values.size() % 4 != 0 && values.size() < run.want) continue;
      const int64_t now = NowNanos();
      const bool slow = (now - t) / static_cast<int64_t>(since) >= run.slow_pull_ns;
      t = now;
      since = 0;
      if (slow || now - start >= run.max_ns) break;
    }
    times.ns = t - start;
    if (run.snapshot && !terminal.has_value() &&
        snapshots_.Due(consumed_.load(std::memory_order_relaxed), t)) {
      snapshots_.Take(pulled_, [&input](StateWriter& w) { return input.SaveState(w); });
    }
    under_lock(values, terminal, times);
    return times;
  }

  // The consumer returned an element with fingerprint `fp`.
  void Took(uint32_t fp) {
    const int64_t consumed = consumed_.load(std::memory_order_relaxed) + 1;
    consumed_.store(consumed, std::memory_order_relaxed);
    taken_fps_.Add(fp);
    // Those before the base snapshot are dropped in runs, not one by one.
    if (taken_fps_.size() > 2 * kFingerprintsKept) {
      taken_fps_.DropBefore(snapshots_.BasePulled(consumed));
    }
  }

  // The input's state: with no producer running since the last Reset(), the
  // input's own; else the newest snapshot the consumer has passed (SaveOwn()
  // then writes the elements taken since).
  absl::Status SaveInput(bool running, Stage<T>& input, StateWriter& w) {
    if (!running) {
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
  absl::Status SaveOwn(StateWriter& w) const {
    w.U64(static_cast<uint64_t>(save_skip_));
    w.Fixed32(save_fold_);
    return absl::OkStatus();
  }
  // Pulls again what the consumer had taken after the snapshot, checks their
  // fingerprints (`fp(input element)`) and drops them.
  template <typename Fingerprint>
  absl::Status RestoreOwn(StateReader& r, Stage<T>& input, const std::string& name,
                          Fingerprint fp) {
    const uint64_t skip = r.U64();
    const uint32_t fold = r.Fixed32();
    if (!r.status().ok()) return r.status();
    if (skip > kMaxSkip) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", name, " skips ", skip, " elements"));
    }
    Reset();
    return SkipInputs(input, static_cast<int64_t>(skip), fold, fp, name);
  }

 private:
  // A state's skip count above this is corrupt (and would spin over a Repeat).
  static constexpr uint64_t kMaxSkip = uint64_t{1} << 32;
  // Fingerprints kept before older ones are dropped (those before the base snapshot).
  static constexpr size_t kFingerprintsKept = 4096;

  internal::Mutex pull_mu_;
  // pulled_ (under pull_mu_) counts the input elements pulled, consumed_
  // (written by the consumer) the elements it took, both since the last Reset().
  int64_t pulled_ ABSL_GUARDED_BY(pull_mu_) = 0;
  std::atomic<int64_t> consumed_{0};
  InputSnapshots snapshots_;
  TakenFingerprints taken_fps_;  // the consumer's
  int64_t save_skip_ = 0;        // the consumer's: between SaveInput and SaveOwn
  uint32_t save_fold_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_SNAPSHOTTED_INPUT_H_
