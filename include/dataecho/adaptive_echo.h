// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// adaptive_echo.h: adaptive data echoing — repeat only while the upstream stalls.
//
// A fixed echo factor (echo.h) is a guess. Adaptive echo repeats exactly as
// much as the upstream's slowness requires. Each time the consumer asks:
//
//   1. a fresh item is ready upstream (a non-blocking TryNext() across the
//      prefetch boundary) -> emit it fresh;
//   2. otherwise, some recent item is eligible -> emit a repeat of it: of the
//      pooled items, the one emitted fewest times so far (the oldest among
//      equals), so repeats spread evenly;
//   3. otherwise -> wait in the input's Next() for the next fresh item.
//
// No item is emitted more than `max_factor` (m) times in total, the fresh
// emission included. For a fractional m each item's budget is floor(m) or
// floor(m) + 1, drawn per item from the seeded generator exactly as EchoStage
// draws its copies (so the budgets match EchoStage's copy counts for the same
// seed). The pool keeps the `pool_size` (k) most recent items with budget
// left: an item leaves when its budget is used up or, when a new item arrives
// and the pool is full, because it is the oldest ("evicted").
//
// DEMAND GATE. Behind a queue (a Prefetch after the Batch, as trainers use),
// "the consumer asks" means the queue's producer asks, and it asks as fast as
// it can until the queue is full, so step 2 would repeat items the trainer
// does not need yet. `repeat_gate` ties repeats to the trainer's real demand:
// a repeat is emitted only while the gate returns true; while it is closed the
// stage waits for a fresh item instead, checking the input and the gate every
// `gate_poll`. With PrefetchOptions::level the gate can watch the trainer's
// queue:
//
//   auto level = std::make_shared<std::atomic<int64_t>>(0);
//   auto p = std::move(upstream)                                  // ends in a Prefetch
//       .AdaptiveEcho({.max_factor = 4, .pool_size = 256,
//                      .repeat_gate = [level] { return level->load() < 2; }})
//       .Map(Augment).Shuffle({.buffer_size = 2048}).Batch({.batch_size = 128})
//       .Prefetch({.depth = 4, .level = level});                  // repeat only below 2 batches
//
// With the upstream faster than the consumer, every element is fresh (the
// realized factor is 1); with the upstream R times slower, the realized factor
// approaches min(R, m) and the consumer waits only when nothing is eligible.
// End of stream and errors pass through as soon as the input returns them
// (items still pooled are not repeated then) and stay.
//
// Place it after a Prefetch boundary (stage.h: Prefetch implements TryNext):
//
//   auto p = dataecho::FromVector(std::move(examples))
//       .Map(Decode, {.parallelism = 4})
//       .Prefetch({.depth = 64})                                   // the boundary
//       .AdaptiveEcho({.max_factor = 4, .pool_size = 256, .seed = 1})
//       .Shuffle({.buffer_size = 10000, .seed = 2});
//   // batch echoing: ... .Batch({.batch_size = 256}).Prefetch({.depth = 8})
//   //                    .AdaptiveEcho({.max_factor = 3, .pool_size = 4})
//
// TIMING DEPENDENCE. This is the one stage whose output depends on thread
// timing, not only on its seed and input: which requests are served fresh
// depends on when the upstream's items become ready. To reproduce a run for
// debugging, record its decisions (`record_decisions`: one 'F' or 'R' per
// emitted element) and replay them (`replay_decisions`): the replaying stage
// waits for a fresh item at every 'F' and repeats at every 'R', so with the
// same input and seed it emits the same elements whatever the timing. (Or use
// a fixed factor: EchoStage, or AutoEchoStage below, is deterministic after
// its warm-up.)
//
// Stats: "fresh", "repeats", elements (emitted), "realized_factor" = emitted /
// fresh, "repeat_fraction" = repeats / emitted (requests served by repeats),
// "rate_ratio" = R̂, the moving estimate of (upstream time per fresh item) /
// (consumer time per element) (see internal/echo_pool.h; about 1 while the
// upstream keeps up, 0 until `rate_window` fresh items arrived; the consumer's
// time is the time between its requests minus the time this stage waited, so
// when the consumer is a queue's producer (a Prefetch later in the pipeline)
// that the upstream starves even with m-fold echoing, R̂ overstates R: it is
// then > m as R is, and clamp(R̂, 1, m) is still min(R, m)), "stalls" =
// waits with no eligible item, "floor_waits" = waits forced by
// min_fresh_fraction, "evicted" = items that left the full pool with budget
// left, "pooled" = items in the pool, "gate_waits" = requests that waited for
// a fresh item because the demand gate was closed; input_wait = time blocked
// on the input.
//
// AutoEchoStage (auto_echo.h) runs this stage for a warm-up, then fixes the
// factor at clamp(R̂, 1, m).
//
// Thread safety: as every stage (stage.h). `record_decisions` is written from
// the consumer thread.
#ifndef DATAECHO_ADAPTIVE_ECHO_H_
#define DATAECHO_ADAPTIVE_ECHO_H_

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/echo_pool.h"
#include "dataecho/internal/random.h"
#include "dataecho/stage.h"
#include "fmt/format.h"

namespace dataecho {

struct AdaptiveEchoOptions {
  // m: the most emissions of one item, the fresh one included. Finite, in
  // [1, 1e6]. Fractional values are realized per item (see the file comment).
  double max_factor = 4.0;
  // k: the most recent items kept for repeats. >= 1.
  int64_t pool_size = 64;
  // Floor on fresh / emitted: a repeat that would take the fraction of fresh
  // elements below it waits for a fresh item instead. In [0, 1]; 0 = no floor.
  double min_fresh_fraction = 0;
  // Seed of the per-item budget draw for fractional m.
  uint64_t seed = 0;
  // R̂: fresh items per estimation window (>= 1) and the weight of a new
  // window in the moving estimate (in (0, 1]).
  int64_t rate_window = 16;
  double rate_smoothing = 0.25;
  // Debugging: if set, every emitted element appends 'F' (fresh) or 'R'
  // (repeat) to *record_decisions. REQUIRES: outlives the stage; read it only
  // while no Next() runs.
  std::string* record_decisions = nullptr;
  // Debugging: decisions ('F'/'R') to follow instead of asking the upstream
  // whether an item is ready. Once they run out, the stage is adaptive again.
  // An 'R' with no eligible item means the input differs from the recorded
  // run: FAILED_PRECONDITION.
  std::string replay_decisions;
  // Demand gate (see the file comment): if set, a repeat is emitted only while
  // it returns true; otherwise the request waits for a fresh item, polling the
  // input (TryNext) and the gate every `gate_poll`. Called from the consumer's
  // thread; must be cheap. Empty = repeat whenever no fresh item is ready.
  std::function<bool()> repeat_gate = nullptr;
  absl::Duration gate_poll = absl::Microseconds(100);
  // The clock (nanoseconds) for R̂; empty = the monotonic clock. For
  // simulations and tests.
  std::function<int64_t()> clock;
  // Name shown in stats.
  std::string name = "adaptive_echo";

  absl::Status Validate() const {
    if (!std::isfinite(max_factor) || max_factor < 1.0 || max_factor > 1e6) {
      return absl::InvalidArgumentError(fmt::format(
          "adaptive echo max_factor must be a finite number in [1, 1e6], got {}", max_factor));
    }
    if (pool_size < 1) {
      return absl::InvalidArgumentError(
          fmt::format("adaptive echo pool_size must be >= 1, got {}", pool_size));
    }
    if (!(min_fresh_fraction >= 0 && min_fresh_fraction <= 1)) {
      return absl::InvalidArgumentError(fmt::format(
          "adaptive echo min_fresh_fraction must be in [0, 1], got {}", min_fresh_fraction));
    }
    if (gate_poll <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("adaptive echo gate_poll must be > 0");
    }
    if (rate_window < 1 || !(rate_smoothing > 0 && rate_smoothing <= 1)) {
      return absl::InvalidArgumentError(fmt::format(
          "adaptive echo rate_window must be >= 1 and rate_smoothing in (0, 1], got {} and {}",
          rate_window, rate_smoothing));
    }
    const size_t bad = replay_decisions.find_first_not_of("FR");
    if (bad != std::string::npos) {
      return absl::InvalidArgumentError(fmt::format(
          "adaptive echo replay_decisions may hold only 'F' and 'R', found '{}' at offset {}",
          replay_decisions[bad], bad));
    }
    return absl::OkStatus();
  }
};

template <typename T>
class AdaptiveEchoStage : public UnaryStage<T, T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, AdaptiveEchoOptions options) {
    if (absl::Status s = options.Validate(); !s.ok()) return s;
    return StagePtr<T>(new AdaptiveEchoStage(std::move(input), std::move(options), 0));
  }

  Result Next() override {
    Result out;
    Step(/*may_block=*/true, &out);
    return out;
  }

  // Ready unless serving the request would mean waiting for the upstream.
  bool TryNext(Result* out) override { return Step(/*may_block=*/false, out); }

 protected:
  // `fixed_after` > 0: after that many emitted elements (and one R̂ window),
  // fix the factor at clamp(R̂, 1, max_factor) and echo like EchoStage.
  AdaptiveEchoStage(StagePtr<T> input, AdaptiveEchoOptions options, int64_t fixed_after)
      : UnaryStage<T, T>(std::move(input)),
        options_(std::move(options)),
        fixed_after_(fixed_after),
        rng_(options_.seed),
        pool_(static_cast<size_t>(options_.pool_size)),
        estimator_(options_.rate_window, options_.rate_smoothing) {
    SetBudget(options_.max_factor);
  }

  StageStats OwnStats() const override {
    StageStats s;
    s.name = options_.name;
    const double emitted = static_cast<double>(emitted_.Get());
    const double fresh = static_cast<double>(fresh_.Get());
    s.elements = emitted_.Get();
    s.bytes = bytes_.Get();
    s.input_wait = absl::Nanoseconds(input_wait_ns_.Get());
    s.extra = {{"max_factor", options_.max_factor},
               {"pool_size", static_cast<double>(options_.pool_size)},
               {"fresh", fresh},
               {"repeats", emitted - fresh},
               {"realized_factor", fresh > 0 ? emitted / fresh : 0.0},
               {"repeat_fraction", emitted > 0 ? (emitted - fresh) / emitted : 0.0},
               {"rate_ratio", rate_ratio_.load(std::memory_order_relaxed)},
               {"stalls", static_cast<double>(stalls_.Get())},
               {"floor_waits", static_cast<double>(floor_waits_.Get())},
               {"gate_waits", static_cast<double>(gate_waits_.Get())},
               {"evicted", static_cast<double>(evicted_.Get())},
               {"pooled", static_cast<double>(pooled_.Get())}};
    if (fixed_after_ > 0) {
      s.extra.emplace_back("warmup", static_cast<double>(fixed_after_));
      s.extra.emplace_back("chosen_factor", chosen_factor_.load(std::memory_order_relaxed));
    }
    return s;
  }

 private:
  int64_t Now() const { return options_.clock ? options_.clock() : internal::NowNanos(); }

  void SetBudget(double factor) {
    whole_ = static_cast<uint32_t>(std::floor(factor));
    fraction_ = factor - std::floor(factor);
  }

  // Serves one request; false if it would have to wait and !may_block.
  bool Step(bool may_block, Result* out) {
    if (this->cancelled()) {
      *out = CancelledError();
      return true;
    }
    if (terminal_.has_value()) {
      *out = *terminal_;
      return true;
    }
    if (!started_) {
      started_ = true;
      estimator_.Start(Now());
    }
    MaybeFixFactor();
    if (replay_pos_ < options_.replay_decisions.size()) return Replay(may_block, out);
    if (fixed_) {  // EchoStage: the copies of the newest item back to back, then a fresh one
      if (!pool_.empty()) {
        *out = EmitRepeat(pool_.TakeNewest());
        return true;
      }
      return Fresh(may_block, out);
    }
    Result r;
    if (this->input().TryNext(&r)) {
      *out = AcceptFresh(std::move(r));
      return true;
    }
    const bool floor_ok = static_cast<double>(fresh_.Get()) >=
                          options_.min_fresh_fraction * static_cast<double>(emitted_.Get() + 1);
    if (!pool_.empty() && floor_ok) {
      if (!options_.repeat_gate || options_.repeat_gate()) {
        *out = EmitRepeat(pool_.TakeFewest());
        return true;
      }
      if (!may_block) return false;
      return GatedWait(out);
    }
    if (!may_block) return false;
    (pool_.empty() ? stalls_ : floor_waits_).Add(1);
    return Fresh(may_block, out);
  }

  bool Replay(bool may_block, Result* out) {
    if (options_.replay_decisions[replay_pos_] == 'F') {
      if (!Fresh(may_block, out)) return false;
      ++replay_pos_;
      return true;
    }
    if (pool_.empty()) {
      terminal_ = absl::FailedPreconditionError(
          fmt::format("adaptive echo replay: decision {} is a repeat but no item is eligible (the "
                      "input or options differ "
                      "from the recorded run)",
                      replay_pos_));
      *out = *terminal_;
      return true;
    }
    ++replay_pos_;
    *out = EmitRepeat(pool_.TakeFewest());
    return true;
  }

  // The demand gate is closed and a repeat is possible: poll for a fresh item
  // until one is ready or the gate opens.
  bool GatedWait(Result* out) {
    gate_waits_.Add(1);
    const int64_t t0 = Now();
    while (true) {
      absl::SleepFor(options_.gate_poll);
      if (this->cancelled()) {
        *out = CancelledError();
        return true;
      }
      Result r;
      if (this->input().TryNext(&r)) {
        const int64_t waited = Now() - t0;
        input_wait_ns_.Add(waited);
        estimator_.AddBlocked(waited);
        *out = AcceptFresh(std::move(r));
        return true;
      }
      if (options_.repeat_gate()) {
        *out = EmitRepeat(pool_.TakeFewest());
        return true;
      }
    }
  }

  // Takes the next fresh item, waiting for it if may_block.
  bool Fresh(bool may_block, Result* out) {
    Result r;
    if (!may_block) {
      if (!this->input().TryNext(&r)) return false;
    } else {
      const int64_t t0 = Now();
      r = this->input().Next();
      const int64_t waited = Now() - t0;
      input_wait_ns_.Add(waited);
      estimator_.AddBlocked(waited);
    }
    *out = AcceptFresh(std::move(r));
    return true;
  }

  Result AcceptFresh(Result r) {
    if (!r.ok() || !r->has_value()) {
      // CANCELLED comes from our own Cancel(); every other end stays.
      if (!this->cancelled()) terminal_ = r;
      return r;
    }
    if (estimator_.AddFresh(Now()))
      rate_ratio_.store(estimator_.estimate(), std::memory_order_relaxed);
    estimator_.AddEmitted();
    fresh_.Add(1);
    emitted_.Add(1);
    bytes_.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**r)));
    uint32_t budget = whole_;
    if (fraction_ > 0 && rng_.Uniform() < fraction_) ++budget;
    if (pool_.Add(**r, budget)) evicted_.Add(1);
    pooled_.Set(static_cast<int64_t>(pool_.size()));
    if (options_.record_decisions != nullptr) options_.record_decisions->push_back('F');
    return r;
  }

  Result EmitRepeat(T out) {
    estimator_.AddEmitted();
    emitted_.Add(1);
    bytes_.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(out)));
    pooled_.Set(static_cast<int64_t>(pool_.size()));
    if (options_.record_decisions != nullptr) options_.record_decisions->push_back('R');
    return Result(std::move(out));
  }

  // Ends the warm-up of AutoEchoStage once it has emitted fixed_after_
  // elements and R̂ has been measured at least once.
  void MaybeFixFactor() {
    if (fixed_ || fixed_after_ <= 0 || emitted_.Get() < fixed_after_ || estimator_.windows() == 0)
      return;
    const double e = std::clamp(estimator_.estimate(), 1.0, options_.max_factor);
    fixed_ = true;
    chosen_factor_.store(e, std::memory_order_relaxed);
    SetBudget(e);
    pool_.Reset(1);
    pooled_.Set(0);
  }

  const AdaptiveEchoOptions options_;
  const int64_t fixed_after_;
  bool fixed_ = false;
  uint32_t whole_ = 1;  // budget = whole_, or whole_ + 1 with probability fraction_
  double fraction_ = 0;
  internal::Rng rng_;
  internal::EchoPool<T> pool_;
  internal::RateRatioEstimator estimator_;
  bool started_ = false;
  size_t replay_pos_ = 0;
  std::optional<Result> terminal_;  // end of stream or the input's error (sticky)
  internal::Counter fresh_, emitted_, bytes_, input_wait_ns_, stalls_, floor_waits_, gate_waits_,
      evicted_, pooled_;
  std::atomic<double> rate_ratio_{0};
  std::atomic<double> chosen_factor_{0};
};

}  // namespace dataecho

#endif  // DATAECHO_ADAPTIVE_ECHO_H_
