// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "dataecho/internal/mix_core.h"
#include "dataecho/internal/random.h"
#include "dataecho/mix_options.h"
#include "fmt/format.h"

namespace dataecho {

absl::Status MixOptions::Validate(size_t inputs) const {
  if (inputs == 0) {
    return absl::InvalidArgumentError(fmt::format("{}: inputs: no input to mix", name));
  }
  if (inputs > UINT32_MAX - 1) {
    return absl::InvalidArgumentError(fmt::format("{}: inputs: {} is too many", name, inputs));
  }
  if (weights.empty()) return absl::OkStatus();
  if (weights.size() != inputs) {
    return absl::InvalidArgumentError(
        fmt::format("{}: weights: {} weights for {} inputs (one per input, or none)", name,
                    weights.size(), inputs));
  }
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0) {
      return absl::InvalidArgumentError(
          fmt::format("{}: weights[{}] must be a finite number >= 0, got {}", name, i, weights[i]));
    }
    sum += weights[i];
  }
  if (!(sum > 0) || !std::isfinite(sum)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: weights must not all be 0 and must have a finite sum, got {}", name,
                    fmt::join(weights, ", ")));
  }
  return absl::OkStatus();
}

std::string_view MixOnEmptyName(MixOnEmpty v) {
  switch (v) {
    case MixOnEmpty::kStopOnFirstEmpty: return "stop_on_first_empty";
    case MixOnEmpty::kContinueRenormalized: return "continue_renormalized";
    case MixOnEmpty::kRestartInput: return "restart_input";
  }
  return "?";
}

absl::Status ParseMixOnEmpty(std::string_view name, MixOnEmpty* out) {
  for (MixOnEmpty v : {MixOnEmpty::kStopOnFirstEmpty, MixOnEmpty::kContinueRenormalized,
                       MixOnEmpty::kRestartInput}) {
    if (name == MixOnEmptyName(v)) {
      *out = v;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(fmt::format(
      "on_empty must be 'stop_on_first_empty', 'continue_renormalized' or 'restart_input', "
      "got '{}'",
      name));
}

std::string_view MixWeightsOfName(MixWeightsOf v) {
  return v == MixWeightsOf::kFresh ? "fresh" : "emitted";
}

absl::Status ParseMixWeightsOf(std::string_view name, MixWeightsOf* out) {
  if (name == "emitted" || name == "fresh") {
    *out = name == "fresh" ? MixWeightsOf::kFresh : MixWeightsOf::kEmitted;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      fmt::format("weights_of must be 'emitted' or 'fresh', got '{}'", name));
}

namespace internal {

MixCore::MixCore(const MixOptions& options, size_t inputs)
    : options_(options),
      weights_(inputs, 1.0 / static_cast<double>(inputs)),
      inputs_(inputs),
      counts_(new Counts[inputs]) {
  if (!options_.weights.empty()) {
    double sum = 0;
    for (double w : options_.weights) sum += w;
    for (size_t i = 0; i < inputs; ++i) weights_[i] = options_.weights[i] / sum;
  }
  for (size_t i = 0; i < inputs; ++i) counts_[i].passes.Add(1);
}

int64_t MixCore::Pick() const {
  // The draw depends on (seed, epoch, position) only; the inputs that left
  // the epoch (and, for weights of fresh items, the realized factors) decide
  // where it lands.
  Rng rng(MixSeed(options_.seed, epoch_, position_));
  const double u = rng.Uniform();
  const bool fresh = options_.weights_of == MixWeightsOf::kFresh;
  double total = 0;
  // At most a few inputs: two passes over them beat keeping sums up to date.
  auto weight = [&](size_t i) {
    const Input& in = inputs_[i];
    if (in.out || weights_[i] <= 0) return 0.0;
    if (!fresh) return weights_[i];
    // An input that emits f elements per fresh item must be drawn f times as
    // often for its share of fresh items to be its weight: f is its recent
    // realized factor (1 before it gave anything).
    return weights_[i] / std::max(in.fresh_rate, kMinFreshRate);
  };
  for (size_t i = 0; i < inputs_.size(); ++i) total += weight(i);
  if (!(total > 0)) return -1;
  const double target = u * total;
  double sum = 0;
  int64_t last = -1;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const double w = weight(i);
    if (w <= 0) continue;
    sum += w;
    last = static_cast<int64_t>(i);
    if (target < sum) return last;
  }
  return last;  // rounding: the last input in the draw
}

void MixCore::Took(size_t i, int64_t items, int64_t fresh, uint32_t epoch) {
  Input& in = inputs_[i];
  ++in.pass_elements;
  ++in.emitted;
  in.fresh += fresh;
  in.fresh_rate += kFreshRateWeight * (static_cast<double>(fresh) - in.fresh_rate);
  in.newest = std::max(in.newest, epoch);
  ++position_;
  counts_[i].elements.Add(1);
  counts_[i].fresh.Add(fresh);
  counts_[i].items.Add(items);
}

MixCore::AfterEnd MixCore::Ended(size_t i, uint32_t* epoch) {
  Input& in = inputs_[i];
  switch (options_.on_empty) {
    case MixOnEmpty::kStopOnFirstEmpty:
      in.out = true;
      done_ = true;
      return AfterEnd::kEnd;
    case MixOnEmpty::kContinueRenormalized: in.out = true; return AfterEnd::kDrawAgain;
    case MixOnEmpty::kRestartInput: break;
  }
  in.ended_once = true;
  // A pass that gave nothing would give nothing again: the input leaves
  // the epoch instead of spinning (as Repeat's empty pass).
  if (in.pass_elements == 0) in.out = true;
  bool all = true;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    if (weights_[k] > 0 && !inputs_[k].ended_once) all = false;
  }
  if (all) {
    done_ = true;
    return AfterEnd::kEnd;
  }
  if (in.out) return AfterEnd::kDrawAgain;
  *epoch = std::max(in.epoch, in.newest) + 1;
  return AfterEnd::kRestart;
}

void MixCore::Restarted(size_t i, uint32_t epoch) {
  Input& in = inputs_[i];
  in.epoch = in.newest = epoch;
  in.pass_elements = 0;
  counts_[i].passes.Add(1);
}

void MixCore::StartEpoch(uint32_t epoch) {
  for (Input& in : inputs_) in = Input{.epoch = epoch, .newest = epoch};
  for (size_t i = 0; i < inputs_.size(); ++i) counts_[i].passes.Add(1);
  epoch_ = epoch;
  position_ = 0;
  done_ = false;
}

uint64_t MixCore::OptionsHashValue() const {
  OptionsHash h;
  h.Add(std::string_view("mix")).Add(static_cast<uint64_t>(inputs_.size()));
  for (double w : weights_) h.Add(w);
  h.Add(options_.seed)
      .Add(static_cast<uint64_t>(options_.on_empty))
      .Add(static_cast<uint64_t>(options_.weights_of));
  return h.value();
}

void MixCore::Save(StateWriter& w) const {
  w.U64(epoch_);
  w.U64(position_);
  w.Bool(done_);
  for (const Input& in : inputs_) {
    w.Bool(in.out);
    w.Bool(in.ended_once);
    w.U64(in.epoch);
    w.U64(in.newest);
    w.I64(in.pass_elements);
    w.I64(in.emitted);
    w.I64(in.fresh);
    w.Double(in.fresh_rate);
  }
}

absl::Status MixCore::Restore(StateReader& r) {
  epoch_ = static_cast<uint32_t>(r.U64());
  position_ = r.U64();
  done_ = r.Bool();
  for (Input& in : inputs_) {
    in.out = r.Bool();
    in.ended_once = r.Bool();
    in.epoch = static_cast<uint32_t>(r.U64());
    in.newest = static_cast<uint32_t>(r.U64());
    in.pass_elements = r.I64();
    in.emitted = r.I64();
    in.fresh = r.I64();
    in.fresh_rate = r.Double();
    if (!r.status().ok()) break;
    if (in.pass_elements < 0 || in.emitted < 0 || in.fresh < 0 || in.pass_elements > in.emitted ||
        !(in.fresh_rate >= 0) || !std::isfinite(in.fresh_rate)) {
      return absl::DataLossError(fmt::format(
          "pipeline state: {}: an input's counts are negative or inconsistent", options_.name));
    }
  }
  return r.status();
}

StageStats MixCore::Report(StageStats row) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const double elements = static_cast<double>(counts_[i].elements.Get());
    const double items = static_cast<double>(counts_[i].items.Get());
    const double fresh = static_cast<double>(counts_[i].fresh.Get());
    const std::string p = fmt::format("input{}_", i);
    row.extra.emplace_back(p + "weight", weights_[i]);
    row.extra.emplace_back(p + "elements", elements);
    row.extra.emplace_back(p + "fresh", fresh);
    row.extra.emplace_back(p + "echoed", items - fresh);
    row.extra.emplace_back(p + "passes", static_cast<double>(counts_[i].passes.Get()));
  }
  return row;
}

}  // namespace internal
}  // namespace dataecho
