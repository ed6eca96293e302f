// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/consumer_meter.h: what a Pipeline measures at its consumer's pulls
// (stats.h, "THE CONSUMER"): the time between pulls (the consumer's own
// steps) and inside them, and apart from them the first pull (the pipeline
// filling from empty: threads started, queues and buffers filled once), which
// says how long a start takes, not how the steps keep up. Not part of the
// public API.
//
// Thread safety: Before()/After() from the consumer's thread; AppendTo() from
// any thread (relaxed atomics).
#ifndef DATAECHO_INTERNAL_CONSUMER_METER_H_
#define DATAECHO_INTERNAL_CONSUMER_METER_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "absl/base/attributes.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stats.h"
#include "dataecho/trace.h"

namespace dataecho::internal {

class ConsumerMeter {
 public:
  // About every `period`-th pull is timed (and its times weighted by the
  // period it was drawn with): a clock read costs as much as a cheap stage's
  // element. The pulls timed are drawn at random (gaps of 1 to 2 * period - 1
  // pulls), so a pipeline whose elements repeat a pattern (an Echo emitting
  // a fresh item, then copies) is not always timed at the same place in it.
  // Where a pull and the step after it take less than kSampleEveryNanos /
  // period on average, the period grows (up to kMaxPeriod) so that about one
  // pull in kSampleEveryNanos is timed: the clock's share of a cheap pull
  // stays small.
  explicit ConsumerMeter(int64_t period) : min_period_(period < 1 ? 1 : period) {
    period_ = next_weight_ = min_period_;
    until_timed_ = 1;  // the first pull (first_s)
  }

  // Around one pull. The gap after a timed pull, up to the next pull, is
  // the consumer's step.
  // (Always inlined, as Counter's members: they are on every pull.)
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Before() {
    int64_t now = 0;
    if (TraceEnabled()) [[unlikely]]
      TraceBefore();
    if (gap_from_ > 0) {
      now = NowNanos();
      const int64_t step = now - gap_from_;
      step_ns_.Add(step * weight_);
      gap_from_ = 0;
      Adapt(last_in_next_ + step);
    }
    timed_ = --until_timed_ == 0;
    if (timed_) {
      in_ = now > 0 ? now : NowNanos();
      weight_ = next_weight_;
    }
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE void After() {
    if (trace_in_ != 0) [[unlikely]]
      TraceAfter();
    pulls_.Add(1);
    if (!timed_) return;
    const int64_t now = NowNanos();
    last_in_next_ = now - in_;
    if (pulls_.Get() == 1) {
      first_ns_.Set(last_in_next_);
      last_in_next_ = -1;  // the first pull's time says nothing of a pull's cost
    } else {
      in_next_ns_.Add(last_in_next_ * weight_);
    }
    gap_from_ = now;
    DrawNextTimed();
  }

  // Appends "consumer_pulls", "consumer_step_s", "consumer_in_next_s" (every
  // pull but the first) and "consumer_first_s" (the first).
  void AppendTo(StageStats* top) const {
    top->extra.emplace_back("consumer_pulls", static_cast<double>(pulls_.Get()));
    top->extra.emplace_back("consumer_step_s", static_cast<double>(step_ns_.Get()) * 1e-9);
    top->extra.emplace_back("consumer_in_next_s", static_cast<double>(in_next_ns_.Get()) * 1e-9);
    top->extra.emplace_back("consumer_first_s", static_cast<double>(first_ns_.Get()) * 1e-9);
  }

  // Pulls timed at most this far apart in time (about), and at most this
  // many pulls apart.
  static constexpr int64_t kSampleEveryNanos = 20'000;
  static constexpr int64_t kMaxPeriod = 1024;
  static constexpr int64_t kDecideEvery = 64;
  // The current period (tests).
  int64_t period() const { return period_; }

 private:
  // The pulls until the next timed one: 1 to 2 * period - 1 (mean: period).
  void DrawNextTimed() {
    next_weight_ = period_;
    rng_ ^= rng_ << 13;  // xorshift64
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    until_timed_ = 1 + static_cast<int64_t>(rng_ % static_cast<uint64_t>(2 * period_ - 1));
  }
  // `nanos`: one timed pull and the step after it (< 0: not a cost). Every
  // kDecideEvery of them, their mean decides: the period doubles while period
  // * mean stays under kSampleEveryNanos and halves (not below the one asked
  // for) once it is over twice that. (A mean over many samples, not the last
  // few: where one pull in 16 is slow, a few cheap samples in a row must not
  // make the samples so sparse that the slow ones go unseen.)
  void Adapt(int64_t nanos) {
    if (nanos < 0) return;
    window_ns_ += nanos;
    if (++window_n_ < kDecideEvery) return;
    const double spacing = static_cast<double>(window_ns_) / static_cast<double>(window_n_) *
                           static_cast<double>(period_);
    window_ns_ = window_n_ = 0;
    if (spacing < kSampleEveryNanos && period_ < kMaxPeriod) {
      period_ *= 2;
    } else if (spacing > 2 * kSampleEveryNanos && period_ > min_period_) {
      period_ = std::max(min_period_, period_ / 2);
    }
  }

  // The timeline (trace.h): "Pipeline::Next" and the consumer's step between.
  void TraceBefore() {
    trace_in_ = NowNanos();
    if (trace_out_ != 0) TraceComplete("consumer step", "consumer", trace_out_, trace_in_);
  }
  void TraceAfter() {
    trace_out_ = NowNanos();
    TraceComplete("Pipeline::Next", "consumer", trace_in_, trace_out_);
    trace_in_ = 0;
  }

  const int64_t min_period_;
  int64_t period_;
  // The period the last timed pull was drawn with (its in-Next time and the
  // step after it stand for that many pulls'), and the next one's.
  int64_t weight_ = 1, next_weight_;
  int64_t until_timed_;
  uint64_t rng_ = 0x9E3779B97F4A7C15ULL;
  int64_t window_ns_ = 0, window_n_ = 0;  // samples since the last decision
  int64_t last_in_next_ = -1;
  int64_t trace_in_ = 0, trace_out_ = 0;
  bool timed_ = false;
  int64_t in_ = 0, gap_from_ = 0;
  Counter pulls_, step_ns_, in_next_ns_, first_ns_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_CONSUMER_METER_H_
