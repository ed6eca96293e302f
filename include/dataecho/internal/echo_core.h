// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/echo_core.h: the type-independent half of the echo stages: their
// counts and stats, adaptive echo's decisions, its estimate of the rate ratio
// R̂ and its decision record, and auto echo's switch to a fixed factor. The
// templates (echo.h, internal/pooled_echo_stage.h, auto_echo.h) keep only what
// touches elements: the input, the pool, the copies. Not part of the public
// API.
//
// Thread safety: each object is written by the owning stage's consumer thread
// only; the stats methods may run on any thread (atomic counters).
#ifndef DATAECHO_INTERNAL_ECHO_CORE_H_
#define DATAECHO_INTERNAL_ECHO_CORE_H_

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "dataecho/echo_options.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/decision_journal.h"
#include "dataecho/stats.h"
#include "dataecho/trace.h"

namespace dataecho::internal {

// What every echo stage counts: fresh items read, elements and bytes emitted,
// time waiting for the input.
class EchoCounts {
 public:
  void AddFresh(int64_t bytes) {
    if (TraceEnabled()) [[unlikely]] {  // the realized factor before this item
      if (const int64_t f = fresh_.Get(); f > 0) {
        TraceCounter("echo factor", static_cast<double>(emitted_.Get()) / static_cast<double>(f));
      }
    }
    fresh_.Add(1);
    emitted_.Add(1);
    bytes_.Add(bytes);
  }
  void AddRepeat(int64_t bytes) {
    emitted_.Add(1);
    bytes_.Add(bytes);
  }
  void AddInputWait(int64_t ns) { input_wait_ns_.Add(ns); }
  int64_t fresh() const { return fresh_.Get(); }
  int64_t emitted() const { return emitted_.Get(); }

  // name, elements, bytes, input_wait, and the extra figures `leading`
  // followed by "fresh", "repeats" and "realized_factor" (emitted / fresh).
  DATAECHO_EXPORT StageStats
  ToStats(std::string name, std::initializer_list<std::pair<std::string, double>> leading) const;

 private:
  Counter fresh_, emitted_, bytes_, input_wait_ns_;
};

// Moving estimate of R = (upstream time per fresh item) / (downstream time
// per element). A window closes when `window` fresh items have arrived since
// the last one closed; over it,
//   upstream time per item   = wall / fresh,
//   downstream time per elem = (wall - time blocked on the upstream) / emitted,
// and the estimate moves toward the window's ratio by `smoothing` (the first
// window sets it). While the upstream keeps up every element is fresh and the
// ratio is about 1: a faster upstream is not observable through a full queue.
//
// Thread-compatible.
class DATAECHO_EXPORT RateRatioEstimator {
 public:
  RateRatioEstimator(int64_t window, double smoothing)
      : window_(window < 1 ? 1 : window), smoothing_(smoothing) {}

  // Starts the first window at `now_ns` (the first request).
  void Start(int64_t now_ns) {
    if (!started_) {
      started_ = true;
      current_.start_ns = now_ns;
    }
  }
  void AddBlocked(int64_t ns) { current_.blocked_ns += ns; }
  void AddEmitted() { ++current_.emitted; }
  // A fresh item arrived at `now_ns` (count its emission separately). Returns
  // true if a window closed and the estimate changed.
  bool AddFresh(int64_t now_ns);
  // The same, reading the time (`now()`) only when the item closes a window:
  // for stages where a clock read per item costs too much (EchoStage).
  template <typename Now>
  bool AddFreshLazy(Now now) {
    if (current_.fresh + 1 < window_) {
      ++current_.fresh;
      return false;
    }
    return AddFresh(now());
  }
  bool started() const { return started_; }

  double estimate() const { return estimate_; }  // 0 until a window closed
  int64_t windows() const { return windows_; }

 private:
  // What the window being measured has seen since it started.
  struct Window {
    int64_t start_ns = 0;
    int64_t blocked_ns = 0;  // blocked on the upstream
    int64_t fresh = 0;
    int64_t emitted = 0;
  };

  const int64_t window_;
  const double smoothing_;
  bool started_ = false;
  Window current_;
  int64_t windows_ = 0;  // windows closed
  double estimate_ = 0;
};

// Adaptive echo's decisions and figures (adaptive_echo.h), apart from the
// items themselves. The stage asks it what to do when no fresh item is ready,
// and reports every emission, wait and change of its pool.
class DATAECHO_EXPORT AdaptiveEchoCore {
 public:
  // What to do with a request when no fresh item is ready.
  enum class Action {
    kRepeat,      // emit a repeat now
    kGateClosed,  // a repeat is possible but the demand gate is closed: poll
    kStall,       // nothing is eligible: wait for the input
    kFloorWait,   // a repeat would break min_fresh_fraction: wait for the input
  };

  // REQUIRES: options.Validate() is OK.
  // `journal`: where the decisions are recorded for a restore behind a
  // Prefetch (internal/decision_journal.h); null: nowhere.
  explicit AdaptiveEchoCore(AdaptiveEchoOptions options,
                            std::shared_ptr<DecisionJournal> journal = nullptr);

  const AdaptiveEchoOptions& options() const { return options_; }
  const std::shared_ptr<DecisionJournal>& journal() const { return journal_; }
  // Nanoseconds on the options' clock (the monotonic clock by default).
  int64_t Now() const { return options_.clock ? options_.clock() : NowNanos(); }
  // At the first request: R̂'s first window starts.
  void StartOnce() {
    if (!started_) {
      started_ = true;
      estimator_.Start(Now());
    }
  }

  // Replay of recorded decisions: true while some are left; the next one
  // ('F': wait for a fresh item, 'R': repeat); step past it.
  bool replaying() const { return replay_pos_ < replay_.size(); }
  bool ReplayWantsFresh() const { return replay_[replay_pos_] == 'F'; }
  void ReplayStep() { ++replay_pos_; }
  // A restored stage (checkpoints): `decisions` were taken before its state
  // was saved, so a replay goes on after them.
  void SeekReplay(uint64_t decisions) {
    replay_pos_ = static_cast<size_t>(decisions < replay_.size() ? decisions : replay_.size());
  }
  // A restored stage behind a Prefetch: the decisions its journal says it
  // took after its state was saved (internal/decision_journal.h), to take
  // again from now on instead of the recorded ones.
  void ReplayFromHere(std::string decisions) {
    replay_ = std::move(decisions);
    replay_pos_ = 0;
  }
  // FAILED_PRECONDITION: the next decision is a repeat and nothing is eligible.
  absl::Status ReplayMismatch() const;

  // No fresh item is ready: repeat, or why not. Calls the demand gate.
  Action WithoutFresh(bool pool_empty, const EchoCounts& counts) const;
  // The request waits, for `action`'s reason (counts stalls, floor_waits,
  // gate_waits).
  void CountWait(Action action);
  // Is the demand gate open (or is there none)?
  bool GateOpen() const { return !options_.repeat_gate || options_.repeat_gate(); }
  // Sleeps one gate_poll.
  void SleepGatePoll() const;

  // Reports: a wait of `ns` for the input; a fresh item of `bytes` arrived
  // (before it is pooled); it was pooled (`evicted`: the oldest entry left
  // with budget left; `pooled`: the pool's size now); a repeat of `bytes` was
  // emitted, leaving `pooled` entries; the pool was emptied.
  void OnWaited(int64_t ns, EchoCounts& counts);
  // A wait of `ns` while the demand gate was closed: the consumer did not
  // need an element, so it counts as input_wait but not as time blocked on
  // the upstream in R̂ (that made R̂ overstate R many times over).
  void OnGateWaited(int64_t ns, EchoCounts& counts) { counts.AddInputWait(ns); }
  void OnFresh(int64_t bytes, EchoCounts& counts);
  void OnPooled(bool evicted, size_t pooled);
  void OnRepeat(int64_t bytes, size_t pooled, EchoCounts& counts);
  void OnPoolCleared() { pooled_.Set(0); }

  const RateRatioEstimator& estimator() const { return estimator_; }

  // The stage's stats under `name` (see adaptive_echo.h for the keys).
  StageStats Stats(std::string name, const EchoCounts& counts) const;

 private:
  void Record(char decision) {
    if (options_.record_decisions != nullptr) options_.record_decisions->push_back(decision);
    if (journal_ != nullptr) journal_->Record(decision);
  }

  const AdaptiveEchoOptions options_;
  const std::shared_ptr<DecisionJournal> journal_;
  RateRatioEstimator estimator_;
  bool started_ = false;
  std::string replay_;  // options_.replay_decisions, or a journal's
  size_t replay_pos_ = 0;
  Counter stalls_, floor_waits_, gate_waits_, evicted_, pooled_;
  std::atomic<double> rate_ratio_{0};
};

// Auto echo's switch (auto_echo.h): once `warmup` elements were emitted and
// R̂ was measured at least once, the factor is fixed at clamp(R̂, 1, m).
class DATAECHO_EXPORT AutoEchoSwitch {
 public:
  explicit AutoEchoSwitch(int64_t warmup) : warmup_(warmup) {}

  bool fixed() const { return fixed_; }
  double chosen_factor() const { return chosen_factor_.load(std::memory_order_relaxed); }
  // A restored stage (checkpoints): the factor was fixed at `factor` before.
  void RestoreFixed(double factor) {
    fixed_ = true;
    chosen_factor_.store(factor, std::memory_order_relaxed);
  }
  // The factor to fix now, once; std::nullopt before and after that.
  std::optional<double> Check(int64_t emitted, const RateRatioEstimator& estimator,
                              double max_factor);
  // Appends "warmup" and "chosen_factor" (0 until the switch).
  void AppendStats(StageStats* stats) const;

 private:
  const int64_t warmup_;
  bool fixed_ = false;
  std::atomic<double> chosen_factor_{0};
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ECHO_CORE_H_
