// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "regime.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "fmt/format.h"

namespace dataecho::bench {

Spread Summarize(std::vector<double> samples) {
  Spread s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return s;
}

std::vector<double> Factors(const BenchConfig& config) {
  std::vector<double> factors = {1.0};
  for (double e : config.echo) {
    if (std::find(factors.begin(), factors.end(), e) == factors.end()) factors.push_back(e);
  }
  if ((config.insert == Insert::kAdaptive || config.insert == Insert::kAuto) &&
      std::find(factors.begin(), factors.end(), config.max_echo) == factors.end()) {
    factors.push_back(config.max_echo);
  }
  return factors;
}

std::vector<double> RepeatOrder(const std::vector<double>& factors, int repeat) {
  std::vector<double> order = factors;
  if (order.empty()) return order;
  const auto shift =
      static_cast<std::ptrdiff_t>(static_cast<size_t>(std::max(repeat, 0)) % order.size());
  std::rotate(order.begin(), order.begin() + shift, order.end());
  return order;
}

std::vector<RunResult> SummarizePoints(const std::vector<RunResult>& runs,
                                       const std::vector<double>& factors) {
  // Each factor's runs, in repeat order.
  std::map<double, std::vector<const RunResult*>> by_factor;
  for (const RunResult& r : runs) by_factor[r.echo].push_back(&r);
  for (auto& [e, list] : by_factor) {
    std::sort(list.begin(), list.end(),
              [](const RunResult* a, const RunResult* b) { return a->repeat < b->repeat; });
  }
  std::map<int, double> baseline_of_repeat;
  std::vector<double> baseline_samples;
  for (const RunResult* b : by_factor[1.0]) {
    baseline_of_repeat[b->repeat] = b->steps_per_sec;
    baseline_samples.push_back(b->steps_per_sec);
  }
  const double baseline = Summarize(baseline_samples).median;

  std::vector<RunResult> points;
  for (double e : factors) {
    const std::vector<const RunResult*>& list = by_factor[e];
    if (list.empty()) continue;
    std::vector<double> samples, efficiencies;
    for (const RunResult* r : list) {
      samples.push_back(r->steps_per_sec);
      auto base = baseline_of_repeat.find(r->repeat);
      if (base != baseline_of_repeat.end() && base->second > 0 && r->ideal_speedup > 0)
        efficiencies.push_back(r->steps_per_sec / base->second / r->ideal_speedup);
    }
    // The median run: the lower middle one by steps/s.
    std::vector<const RunResult*> by_speed = list;
    std::sort(by_speed.begin(), by_speed.end(), [](const RunResult* a, const RunResult* b) {
      return a->steps_per_sec < b->steps_per_sec;
    });
    RunResult p = *by_speed[(by_speed.size() - 1) / 2];
    const Spread speed = Summarize(samples);
    const Spread eff = Summarize(efficiencies);
    p.repeat = 0;
    p.repeats = static_cast<int>(list.size());
    p.steps_per_sec = speed.median;
    p.steps_per_sec_samples = samples;
    p.steps_per_sec_min = speed.min;
    p.steps_per_sec_max = speed.max;
    p.speedup = baseline > 0 ? speed.median / baseline : 0;
    p.efficiency = p.ideal_speedup > 0 ? p.speedup / p.ideal_speedup : 0;
    p.efficiency_min = eff.min;
    p.efficiency_max = eff.max;
    p.out_of_regime = false;
    points.push_back(std::move(p));
  }
  return points;
}

double NominalStepsPerSec(double upstream_ratio, double step_ms) {
  if (upstream_ratio <= 0 || step_ms <= 0) return 0;
  return 1000.0 / (std::max(upstream_ratio, 1.0) * step_ms);
}

std::vector<std::string> CheckRegime(const BenchConfig& config, std::vector<RunResult>& points) {
  std::vector<std::string> warnings;
  for (RunResult& p : points) p.out_of_regime = false;
  // A point out of the regime the figures assume: marked, and why.
  auto out_of_regime = [&warnings](RunResult& p, std::string why) {
    p.out_of_regime = true;
    warnings.push_back(std::move(why));
  };
  const double nominal = NominalStepsPerSec(config.upstream_ratio, config.step_ms);
  for (RunResult& p : points) {
    if (p.echo != 1.0 || nominal <= 0) continue;
    const double off = p.steps_per_sec / nominal - 1;
    if (std::abs(off) > config.baseline_tolerance) {
      out_of_regime(
          p, fmt::format("baseline (e=1) ran at {:.1f} steps/s, {:.1f}% {} its nominal {:.1f} = "
                         "1 / (R x step) (tolerance {:g}%): {}; every speedup is relative to it",
                         p.steps_per_sec, 100 * std::abs(off), off < 0 ? "below" : "above", nominal,
                         100 * config.baseline_tolerance,
                         off < 0 ? "other load on the machine, or a source slower than R assumes"
                                 : "the upstream delivers faster than R assumes"));
    }
  }
  for (RunResult& p : points) {
    if (p.efficiency > config.max_efficiency) {
      out_of_regime(
          p, fmt::format("e={:g}: efficiency {:.3f} is above {:g} (speedup {:.2f}x against an "
                         "ideal of {:.2f}x): "
                         "the baseline was slowed by something other than the upstream",
                         p.echo, p.efficiency, config.max_efficiency, p.speedup, p.ideal_speedup));
    }
  }
  for (RunResult& p : points) {
    const Spread spread{p.steps_per_sec, p.steps_per_sec_min, p.steps_per_sec_max};
    if (p.repeats > 1 && spread.Relative() > config.max_spread) {
      out_of_regime(
          p,
          fmt::format(
              "e={:g}: steps/s varied by {:.1f}% over the {} repeats ({:.1f}-{:.1f}, limit {:g}%): "
              "the load on the machine changed during the bench",
              p.echo, 100 * spread.Relative(), p.repeats, spread.min, spread.max,
              100 * config.max_spread));
    }
  }
  for (RunResult& p : points) {
    if (p.trainer_lost_fraction > config.max_trainer_lost) {
      out_of_regime(
          p, fmt::format(
                 "e={:g}: the trainer loop was neither waiting for a batch nor stepping for "
                 "{:.1f}% of "
                 "the run (limit {:g}%): other load took its CPU, so steps/s measure the machine",
                 p.echo, 100 * p.trainer_lost_fraction, 100 * config.max_trainer_lost));
    }
  }
  return warnings;
}

}  // namespace dataecho::bench
