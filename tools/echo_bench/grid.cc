// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "grid.h"

#include <algorithm>

#include "dataecho/text.h"
#include "fmt/format.h"
#include "regime.h"

namespace dataecho::bench {

std::vector<GridRun> RotatedGrid(const BenchConfig& config, int repeat) {
  std::vector<GridRun> runs = {{Insert::kBeforeAugment, 1.0}};
  for (Insert insert : {Insert::kBeforeAugment, Insert::kAfterAugment, Insert::kBatch}) {
    for (double e : config.echo) {
      if (e != 1.0) runs.push_back({insert, e});
    }
  }
  runs.push_back({Insert::kAuto, config.max_echo});
  const auto shift =
      static_cast<std::ptrdiff_t>(static_cast<size_t>(std::max(repeat, 0)) % runs.size());
  std::rotate(runs.begin(), runs.begin() + shift, runs.end());
  return runs;
}

GridSummary SummarizeGrid(const std::vector<RunResult>& runs) {
  GridSummary s;
  for (const RunResult& r : runs) {
    auto it = std::find_if(s.points.begin(), s.points.end(), [&](const GridPoint& p) {
      return p.insert == r.insert && p.echo == r.echo;
    });
    if (it == s.points.end()) {
      s.points.push_back({.insert = r.insert, .echo = r.echo});
      it = s.points.end() - 1;
    }
    it->samples.push_back(r.steps_per_sec);
  }
  for (GridPoint& p : s.points) {
    p.median = Summarize(p.samples).median;
    if (p.insert == "auto") {
      s.auto_point = p;
    } else if (p.median > s.best_fixed.median) {
      s.best_fixed = p;
    }
  }
  s.auto_vs_best_fixed = s.best_fixed.median > 0 ? s.auto_point.median / s.best_fixed.median : 0;
  return s;
}

std::string FormatGrid(const GridSummary& s) {
  std::string out = "\ngrid: median steps/s of every placement and factor\n";
  for (const GridPoint& p : s.points) {
    out += fmt::format(
        "  {:>15} e={:<5g} {:>9.1f} steps/s{}\n", p.insert, p.echo, p.median,
        p.insert == s.best_fixed.insert && p.echo == s.best_fixed.echo ? "  (best fixed)" : "");
  }
  out += fmt::format("grid: auto {:.1f} steps/s / best fixed {:.1f} ({}, e = {:g}) = {:.3f}\n",
                     s.auto_point.median, s.best_fixed.median, s.best_fixed.insert,
                     s.best_fixed.echo, s.auto_vs_best_fixed);
  return out;
}

std::string GridJsonFields(const GridSummary& s) {
  std::string out = fmt::format(
      "\"auto_vs_best_fixed\": {}, \"best_fixed\": {{\"insert\": {}, \"echo\": {}, "
      "\"steps_per_sec\": {}}}, \"auto_steps_per_sec\": {}, \"grid\": [",
      JsonNumber(s.auto_vs_best_fixed), JsonQuote(s.best_fixed.insert),
      JsonNumber(s.best_fixed.echo), JsonNumber(s.best_fixed.median),
      JsonNumber(s.auto_point.median));
  for (size_t i = 0; i < s.points.size(); ++i) {
    const GridPoint& p = s.points[i];
    std::string samples;
    for (size_t j = 0; j < p.samples.size(); ++j)
      samples += (j == 0 ? "" : ", ") + JsonNumber(p.samples[j]);
    out += fmt::format(
        "{}{{\"insert\": {}, \"echo\": {}, \"steps_per_sec\": {}, "
        "\"steps_per_sec_samples\": [{}]}}",
        i == 0 ? "" : ", ", JsonQuote(p.insert), JsonNumber(p.echo), JsonNumber(p.median), samples);
  }
  return out + "]";
}

}  // namespace dataecho::bench
