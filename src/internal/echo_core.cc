// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/internal/echo_core.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "fmt/format.h"

namespace dataecho::internal {

StageStats EchoCounts::ToStats(
    std::string name, std::initializer_list<std::pair<std::string, double>> leading) const {
  StageStats s;
  s.name = std::move(name);
  const double emitted = static_cast<double>(emitted_.Get());
  const double fresh = static_cast<double>(fresh_.Get());
  s.elements = emitted_.Get();
  s.bytes = bytes_.Get();
  s.input_wait = absl::Nanoseconds(input_wait_ns_.Get());
  s.extra.reserve(leading.size() + 3);
  s.extra.insert(s.extra.end(), leading.begin(), leading.end());
  s.extra.emplace_back("fresh", fresh);
  s.extra.emplace_back("repeats", emitted - fresh);
  s.extra.emplace_back("realized_factor", fresh > 0 ? emitted / fresh : 0.0);
  return s;
}

bool RateRatioEstimator::AddFresh(int64_t now_ns) {
  if (++current_.fresh < window_) return false;
  const Window& w = current_;
  const double wall = static_cast<double>(now_ns - w.start_ns);
  const double busy = wall - static_cast<double>(w.blocked_ns);
  const bool usable = wall > 0 && busy > 0 && w.emitted > 0;
  if (usable) {
    const double ratio =
        (wall / static_cast<double>(w.fresh)) / (busy / static_cast<double>(w.emitted));
    estimate_ = windows_ == 0 ? ratio : estimate_ + smoothing_ * (ratio - estimate_);
    ++windows_;
  }
  current_ = {.start_ns = now_ns};
  return usable;
}

AdaptiveEchoCore::AdaptiveEchoCore(AdaptiveEchoOptions options,
                                   std::shared_ptr<DecisionJournal> journal)
    : options_(std::move(options)),
      journal_(std::move(journal)),
      estimator_(options_.rate_window, options_.rate_smoothing),
      replay_(options_.replay_decisions) {}

absl::Status AdaptiveEchoCore::ReplayMismatch() const {
  return absl::FailedPreconditionError(
      fmt::format("adaptive echo replay: decision {} is a repeat but no item is eligible (the "
                  "input or options differ "
                  "from the recorded run)",
                  replay_pos_));
}

AdaptiveEchoCore::Action AdaptiveEchoCore::WithoutFresh(bool pool_empty,
                                                        const EchoCounts& counts) const {
  const bool floor_ok = static_cast<double>(counts.fresh()) >=
                        options_.min_fresh_fraction * static_cast<double>(counts.emitted() + 1);
  if (!pool_empty && floor_ok) return GateOpen() ? Action::kRepeat : Action::kGateClosed;
  return pool_empty ? Action::kStall : Action::kFloorWait;
}

void AdaptiveEchoCore::CountWait(Action action) {
  switch (action) {
    case Action::kGateClosed: gate_waits_.Add(1); break;
    case Action::kStall: stalls_.Add(1); break;
    case Action::kFloorWait: floor_waits_.Add(1); break;
    case Action::kRepeat: break;
  }
}

void AdaptiveEchoCore::SleepGatePoll() const { absl::SleepFor(options_.gate_poll); }

void AdaptiveEchoCore::OnWaited(int64_t ns, EchoCounts& counts) {
  counts.AddInputWait(ns);
  estimator_.AddBlocked(ns);
}

void AdaptiveEchoCore::OnFresh(int64_t bytes, EchoCounts& counts) {
  if (estimator_.AddFresh(Now()))
    rate_ratio_.store(estimator_.estimate(), std::memory_order_relaxed);
  estimator_.AddEmitted();
  counts.AddFresh(bytes);
}

void AdaptiveEchoCore::OnPooled(bool evicted, size_t pooled) {
  if (evicted) evicted_.Add(1);
  pooled_.Set(static_cast<int64_t>(pooled));
  Record('F');
}

void AdaptiveEchoCore::OnRepeat(int64_t bytes, size_t pooled, EchoCounts& counts) {
  estimator_.AddEmitted();
  counts.AddRepeat(bytes);
  pooled_.Set(static_cast<int64_t>(pooled));
  Record('R');
}

StageStats AdaptiveEchoCore::Stats(std::string name, const EchoCounts& counts) const {
  StageStats s =
      counts.ToStats(std::move(name), {{"max_factor", options_.max_factor},
                                       {"pool_size", static_cast<double>(options_.pool_size)}});
  const double emitted = static_cast<double>(s.elements);
  const double repeats = s.Extra("repeats");
  s.extra.emplace_back("repeat_fraction", emitted > 0 ? repeats / emitted : 0.0);
  s.extra.emplace_back("rate_ratio", rate_ratio_.load(std::memory_order_relaxed));
  s.extra.emplace_back("stalls", static_cast<double>(stalls_.Get()));
  s.extra.emplace_back("floor_waits", static_cast<double>(floor_waits_.Get()));
  s.extra.emplace_back("gate_waits", static_cast<double>(gate_waits_.Get()));
  s.extra.emplace_back("evicted", static_cast<double>(evicted_.Get()));
  s.extra.emplace_back("pooled", static_cast<double>(pooled_.Get()));
  return s;
}

std::optional<double> AutoEchoSwitch::Check(int64_t emitted, const RateRatioEstimator& estimator,
                                            double max_factor) {
  if (fixed_ || emitted < warmup_ || estimator.windows() == 0) return std::nullopt;
  const double e = std::clamp(estimator.estimate(), 1.0, max_factor);
  fixed_ = true;
  chosen_factor_.store(e, std::memory_order_relaxed);
  return e;
}

void AutoEchoSwitch::AppendStats(StageStats* s) const {
  s->extra.emplace_back("warmup", static_cast<double>(warmup_));
  s->extra.emplace_back("chosen_factor", chosen_factor_.load(std::memory_order_relaxed));
}

}  // namespace dataecho::internal
