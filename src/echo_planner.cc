// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo_planner.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "enum_names.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

// EchoPlacement's values (echo_placement.h) of the three fixed placements.
constexpr int kBefore = 0, kAfter = 1, kBatch = 2;
constexpr const char* kNames[] = {"before_augment", "after_augment", "batch"};

constexpr double kFactorStep = 0.1;

double Ms(double seconds) { return seconds * 1e3; }

// Why `placement` at `e` was chosen, in the costs' words.
std::string Why(const EchoCosts& c, int placement, double e) {
  const std::string cores = fmt::format("{} pipeline core{}", c.cores, c.cores == 1 ? "" : "s");
  const double copy_cpu = placement == kBefore  ? c.augment_cpu + c.row_cpu
                          : placement == kAfter ? c.row_cpu
                                                : 0;
  if (e <= 1.0) {
    const double rows = static_cast<double>(std::max<int64_t>(c.batch_rows, 1));
    if (PredictStepTime(c, placement, 1) > 1.02 * std::max(c.step, 1e-9)) {
      return fmt::format(
          "no echo: at most e = 1, though a batch of {} fresh rows takes {:.3g} ms "
          "against a step of {:.3g} ms",
          c.batch_rows, Ms(PredictStepTime(c, placement, 1)), Ms(c.step));
    }
    return fmt::format(
        "the upstream keeps up: {:.3g} ms per batch of {} fresh rows against a "
        "step of {:.3g} ms",
        Ms(rows * c.upstream_time), c.batch_rows, Ms(c.step));
  }
  const double fresh_cost = c.upstream_cpu + c.augment_cpu + c.row_cpu;
  // Copies are cheap: one costs next to nothing of a fresh item, or the
  // augmentation next to nothing of the upstream's time per item while that
  // time is not the upstream's own CPU. The upstream is I/O-bound only when
  // its time per item is mostly not its CPU (a CPU-bound upstream can make
  // copies cheap too, but it is not I/O).
  const bool upstream_io = c.upstream_cpu < 0.5 * c.upstream_time;
  // (A batch copy always costs nothing; whether batch echo pays depends on
  // the augmentation of the fresh items, said below when it is not cheap.)
  if ((placement != kBatch && copy_cpu < 0.02 * std::max(fresh_cost, 1e-9)) ||
      (upstream_io && c.augment_cpu < 0.05 * c.upstream_time)) {
    if (upstream_io) {
      return fmt::format(
          "a copy costs {:.3g} ms of the {}, a fresh item {:.3g} ms of the upstream's time "
          "(I/O-bound)",
          Ms(copy_cpu), cores, Ms(c.upstream_time));
    }
    return fmt::format(
        "a copy costs {:.3g} ms of the {}, a fresh item {:.3g} ms of the upstream's CPU "
        "(CPU-bound upstream)",
        Ms(copy_cpu), cores, Ms(c.upstream_cpu));
  }
  if (placement == kBefore) {
    return fmt::format("augmenting a copy costs {:.3g} ms of the {}, a fresh item {:.3g} ms",
                       Ms(c.augment_cpu), cores, Ms(fresh_cost));
  }
  return fmt::format("augmenting a copy would cost {:.3g} ms of the {}{}", Ms(c.augment_cpu), cores,
                     placement == kBatch
                         ? "; a batch copy costs nothing"
                         : fmt::format("; a copy here costs {:.3g} ms", Ms(copy_cpu)));
}

const std::optional<double>& CopyValue(const AutoPlacementOptions& o, int placement) {
  return placement == kBefore  ? o.copy_value_before
         : placement == kAfter ? o.copy_value_after
                               : o.copy_value_batch;
}

const std::vector<double>& Gains(const AutoPlacementOptions& o, int placement) {
  return placement == kBefore  ? o.copy_gains_before
         : placement == kAfter ? o.copy_gains_after
                               : o.copy_gains_batch;
}

// Factors are tried in steps of 0.1, and of 2 % past e = 5 (a plan need not
// try ten million factors under max_factor = 1e6).
double NextFactor(double e) { return e + std::max(kFactorStep, 0.02 * e); }

// The smallest factor within 2 % of the best of `rate(e)` for e in [1,
// max_factor], plus 10 % headroom (a factor a little past the knee costs a
// little; one short of it costs the rate).
template <typename Rate>
double KneeFactor(const Rate& rate, double max_factor) {
  double top = 0;
  for (double e = 1; e <= max_factor + 1e-9; e = NextFactor(e)) top = std::max(top, rate(e));
  double e = 1;
  while (NextFactor(e) <= max_factor + 1e-9 && rate(e) < 0.98 * top) e = NextFactor(e);
  if (e > 1) e = std::min(max_factor, e * 1.1);
  return std::round(e * 100) / 100;
}

bool Fits(const EchoCosts& c, int placement, int64_t budget) {
  const int64_t held = placement == kBefore  ? c.item_bytes
                       : placement == kAfter ? c.augmented_bytes
                                             : c.batch_bytes;
  return held <= budget;
}

}  // namespace

absl::Status AutoPlacementOptions::Validate() const {
  if (!std::isfinite(max_factor) || max_factor < 1 || max_factor > 1e6) {
    return absl::InvalidArgumentError(fmt::format(
        "auto echo placement max_factor must be a finite number in [1, 1e6], got {}", max_factor));
  }
  if (pipeline_cores < 0 || trainer_cores < 0) {
    return absl::InvalidArgumentError(
        fmt::format("auto echo placement pipeline_cores and trainer_cores must be >= 0, got {} "
                    "and {}",
                    pipeline_cores, trainer_cores));
  }
  if (ram_budget_bytes <= 0) {
    return absl::InvalidArgumentError(
        fmt::format("auto echo placement ram_budget_bytes must be > 0, got {}", ram_budget_bytes));
  }
  if (decide_every < 2) {
    return absl::InvalidArgumentError(
        fmt::format("auto echo placement decide_every must be >= 2, got {}", decide_every));
  }
  if (decide_every_rows < 0) {
    return absl::InvalidArgumentError(fmt::format(
        "auto echo placement decide_every_rows must be >= 0, got {}", decide_every_rows));
  }
  if (!std::isfinite(loss_gap_scale) || !(loss_gap_scale > 0) || loss_min_rows < 1) {
    return absl::InvalidArgumentError(
        fmt::format("auto echo placement loss_gap_scale must be finite and > 0 and "
                    "loss_min_rows >= 1, got {} and {}",
                    loss_gap_scale, loss_min_rows));
  }
  if (start_from.has_value()) {
    const EchoPlannerMemory& m = *start_from;
    const EchoCosts& c = m.costs;
    bool costs_ok = c.batch_rows >= 0 && c.cores >= 0;
    for (double v : {c.upstream_cpu, c.augment_cpu, c.row_cpu, c.upstream_time, c.step}) {
      costs_ok = costs_ok && std::isfinite(v) && v >= 0;
    }
    if (m.placement < kBefore || m.placement > kBatch || !(m.factor >= 1) ||
        m.factor > max_factor || !costs_ok) {
      return absl::InvalidArgumentError(fmt::format(
          "auto echo placement start_from must have a placement in [0, 2], a factor in [1, "
          "max_factor = {}] and finite costs >= 0, got placement {} at factor {}",
          max_factor, m.placement, m.factor));
    }
  }
  for (const auto& [field, v] : {std::pair{"copy_value_before", &copy_value_before},
                                 std::pair{"copy_value_after", &copy_value_after},
                                 std::pair{"copy_value_batch", &copy_value_batch}}) {
    if (v->has_value() && !(**v >= 0 && **v <= 1)) {
      return absl::InvalidArgumentError(fmt::format(
          "auto echo placement {} must be a number in [0, 1] (or not set), got {}", field, **v));
    }
  }
  for (const auto& [field, gains] : {std::pair{"copy_gains_before", &copy_gains_before},
                                     std::pair{"copy_gains_after", &copy_gains_after},
                                     std::pair{"copy_gains_batch", &copy_gains_batch}}) {
    for (size_t i = 0; i < gains->size(); ++i) {
      const double g = (*gains)[i];
      if (!std::isfinite(g) || g < 0 || g > static_cast<double>(i + 2)) {
        return absl::InvalidArgumentError(fmt::format(
            "auto echo placement {}[{}] (the gain at e = {}) must be a number in [0, {}], got {}",
            field, i, i + 2, i + 2, g));
      }
    }
  }
  return absl::OkStatus();
}

double PredictStepTime(const EchoCosts& c, int placement, double e) {
  const double b = static_cast<double>(std::max<int64_t>(c.batch_rows, 1));
  const double f = b / std::max(e, 1.0);
  double down = 0;
  switch (placement) {
    case kBefore: down = b * (c.augment_cpu + c.row_cpu); break;
    case kAfter: down = f * c.augment_cpu + b * c.row_cpu; break;
    default: down = f * (c.augment_cpu + c.row_cpu); break;
  }
  const double up_cpu = f * c.upstream_cpu;
  // The upstream cannot deliver faster than it did while it ran (its time
  // per item: latency and its own CPU, whichever bounds it).
  const double cores = static_cast<double>(std::max(c.cores, 1));
  return std::max({c.step, down, (down + up_cpu) / cores, f * c.upstream_time, 1e-9});
}

double PlacementFactor(const EchoCosts& c, int p, double max_factor) {
  // Copies beyond what the upstream needs only cost quality.
  return KneeFactor([&](double e) { return 1 / PredictStepTime(c, p, e); }, max_factor);
}

double CopyGain(const AutoPlacementOptions& o, int placement, double e) {
  e = std::max(e, 1.0);
  if (const std::optional<double>& v = CopyValue(o, placement)) return 1 + (e - 1) * *v;
  const std::vector<double>& g = Gains(o, placement);           // at e = 2, 3, ...
  auto at = [&](size_t k) { return k <= 1 ? 1.0 : g[k - 2]; };  // G at integer factor k
  const size_t last = g.size() + 1;                             // the last factor measured
  if (e <= static_cast<double>(last)) {
    const auto k = static_cast<size_t>(std::floor(e));
    if (k >= last) return at(last);
    return at(k) + (e - static_cast<double>(k)) * (at(k + 1) - at(k));
  }
  // Past it: a rising gain adds half as much with each further unit of
  // factor (at most twice the last step's rise in all); a falling one keeps
  // falling as it did, to 0.
  const double step = at(last) - at(last - 1), x = e - static_cast<double>(last);
  if (step >= 0) return at(last) + 2 * step * (1 - std::exp2(-x));
  return std::max(0.0, at(last) + step * x);
}

double PredictProgress(const EchoCosts& c, int placement, double e,
                       const AutoPlacementOptions& options) {
  const double b = static_cast<double>(std::max<int64_t>(c.batch_rows, 1));
  e = std::max(e, 1.0);
  return b * CopyGain(options, placement, e) / e / PredictStepTime(c, placement, e);
}

double PredictProgress(const EchoCosts& c, int placement, double e, double copy_value) {
  AutoPlacementOptions linear;
  linear.copy_value_before = linear.copy_value_after = linear.copy_value_batch = copy_value;
  return PredictProgress(c, placement, e, linear);
}

EchoPlan PlanEcho(const EchoCosts& c, const AutoPlacementOptions& options) {
  const bool progress = options.prefer == EchoPrefer::kProgress;
  struct Best {
    double e = 1, rate = 0, progress = 0;  // the plan's factor for p, its rates
    double fastest_rate = 0;               // the step rate at p's factor for speed
    double speed_e = 1;                    // that factor
    bool fits = false;
  };
  Best per[3];
  for (int p : {kBefore, kAfter, kBatch}) {
    per[p].fits = Fits(c, p, options.ram_budget_bytes);
    if (!per[p].fits) continue;
    const double speed_e = PlacementFactor(c, p, options.max_factor);
    per[p].fastest_rate = 1 / PredictStepTime(c, p, speed_e);
    per[p].speed_e = speed_e;
    per[p].e = progress ? KneeFactor([&](double e) { return PredictProgress(c, p, e, options); },
                                     options.max_factor)
                        : speed_e;
    per[p].rate = 1 / PredictStepTime(c, p, per[p].e);
    per[p].progress = PredictProgress(c, p, per[p].e, options);
  }
  // The fastest by step rate, and the best by progress.
  int fastest = -1, most = -1;
  for (int p : {kBefore, kAfter, kBatch}) {
    if (!per[p].fits) continue;
    if (fastest < 0 || per[p].fastest_rate > per[fastest].fastest_rate * 1.0001) fastest = p;
    if (most < 0 || per[p].progress > per[most].progress * 1.0001) most = p;
  }
  EchoPlan plan;
  if (fastest < 0) {  // nothing fits the budget: no echo
    plan.placement = kBefore;
    plan.factor = 1;
    plan.steps_per_sec = 1 / PredictStepTime(c, kBefore, 1);
    plan.best_steps_per_sec = plan.steps_per_sec;
    plan.progress_per_sec = PredictProgress(c, kBefore, 1, options);
    plan.reason = fmt::format("no echo: no placement's buffer fits the RAM budget of {} bytes",
                              options.ram_budget_bytes);
    return plan;
  }
  // kSpeed: the fastest. kQuality: the most example-level placement within
  // 10 % of the fastest's step rate; kProgress: within 2 % of the most
  // progress (the gains already weigh what a copy at each placement is worth).
  int chosen = fastest;
  if (options.prefer != EchoPrefer::kSpeed) {
    for (int p : {kBefore, kAfter, kBatch}) {
      if (!per[p].fits) continue;
      if (progress ? per[p].progress >= 0.98 * per[most].progress
                   : per[p].rate >= 0.9 * per[fastest].fastest_rate) {
        chosen = p;
        break;
      }
    }
  }
  plan.placement = chosen;
  plan.factor = per[chosen].e;
  plan.steps_per_sec = per[chosen].rate;
  plan.best_placement = fastest;
  plan.best_steps_per_sec = per[fastest].fastest_rate;
  plan.progress_per_sec = per[chosen].progress;
  std::string tail;
  if (chosen != fastest && plan.best_steps_per_sec > 1.02 * plan.steps_per_sec) {
    tail = fmt::format("; {} echo would step {:.2g}x faster", kNames[fastest],
                       plan.best_steps_per_sec / plan.steps_per_sec);
    if (progress) {
      tail += fmt::format(" at e = {:.1f}, where its copies are worth G = {:.2f}",
                          per[fastest].speed_e, CopyGain(options, fastest, per[fastest].speed_e));
    } else {
      tail += " (prefer quality: the most example-level placement within 10 %)";
    }
  }
  tail += fmt::format("; predicted {:.1f} steps/s, {:.0f} fresh-equivalent examples/s (G = {:.2f})",
                      plan.steps_per_sec, plan.progress_per_sec,
                      CopyGain(options, chosen, plan.factor));
  if (progress && chosen != most) {
    tail += fmt::format(" (most: {} echo, {:.0f}; prefer progress: within 2 %)", kNames[most],
                        per[most].progress);
  }
  plan.reason = fmt::format("{} echo, e = {:.2f}: {}{}", kNames[chosen], plan.factor,
                            Why(c, chosen, plan.factor), tail);
  return plan;
}

namespace {
constexpr internal::EnumNames<EchoPrefer, 3> kEchoPreferNames{"echo prefer",
                                                              {"speed", "quality", "progress"}};
}  // namespace

const char* EchoPreferName(EchoPrefer prefer) {
  return kEchoPreferNames.Name(prefer, "quality").data();  // the names are literals
}

absl::Status ParseEchoPrefer(const std::string& name, EchoPrefer* prefer) {
  absl::StatusOr<EchoPrefer> parsed = kEchoPreferNames.Parse(name);
  if (!parsed.ok()) return parsed.status();
  *prefer = *parsed;
  return absl::OkStatus();
}

}  // namespace dataecho
