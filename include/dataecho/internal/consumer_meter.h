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

#include <atomic>
#include <cstdint>

#include "dataecho/internal/counter.h"
#include "dataecho/stats.h"
#include "dataecho/trace.h"

namespace dataecho::internal {

class ConsumerMeter {
 public:
  // Every `period`-th pull is timed (and its times scaled by `period`): a
  // clock read costs as much as a cheap stage's element.
  explicit ConsumerMeter(int64_t period) : period_(period < 1 ? 1 : period) {}

  // Around one pull. The gap after a timed pull, up to the next pull, is
  // the consumer's step.
  void Before() {
    int64_t now = 0;
    if (TraceEnabled()) [[unlikely]]
      TraceBefore();
    if (gap_from_ > 0) {
      now = NowNanos();
      step_ns_.Add((now - gap_from_) * period_);
      gap_from_ = 0;
    }
    timed_ = pulls_.Get() % period_ == 0;
    if (timed_) in_ = now > 0 ? now : NowNanos();
  }
  void After() {
    if (trace_in_ != 0) [[unlikely]]
      TraceAfter();
    pulls_.Add(1);
    if (!timed_) return;
    const int64_t now = NowNanos();
    if (pulls_.Get() == 1) {
      first_ns_.Set(now - in_);
    } else {
      in_next_ns_.Add((now - in_) * period_);
    }
    gap_from_ = now;
  }

  // Appends "consumer_pulls", "consumer_step_s", "consumer_in_next_s" (every
  // pull but the first) and "consumer_first_s" (the first).
  void AppendTo(StageStats* top) const {
    top->extra.emplace_back("consumer_pulls", static_cast<double>(pulls_.Get()));
    top->extra.emplace_back("consumer_step_s", static_cast<double>(step_ns_.Get()) * 1e-9);
    top->extra.emplace_back("consumer_in_next_s", static_cast<double>(in_next_ns_.Get()) * 1e-9);
    top->extra.emplace_back("consumer_first_s", static_cast<double>(first_ns_.Get()) * 1e-9);
  }

 private:
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

  const int64_t period_;
  int64_t trace_in_ = 0, trace_out_ = 0;
  bool timed_ = false;
  int64_t in_ = 0, gap_from_ = 0;
  Counter pulls_, step_ns_, in_next_ns_, first_ns_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_CONSUMER_METER_H_
