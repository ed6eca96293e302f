// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/stats.h"

#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "dataecho/text.h"
#include "fmt/format.h"

namespace dataecho {

double StageStats::Extra(std::string_view key, double fallback) const {
  for (const auto& [k, v] : extra) {
    if (k == key) return v;
  }
  return fallback;
}

namespace {

std::string FormatNumber(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.4g}", v);
}

// Time a stage measured doing its own work: its function (busy_s; summed
// over its threads, so divided by them) and deliberate delays (throttled_s).
double Work(const StageStats& s) {
  const double w = s.Extra("busy_s") + s.Extra("throttled_s");
  return s.threads > 1 ? w / s.threads : w;
}

bool IsEcho(const StageStats& s) {
  for (const auto& [k, v] : s.extra) {
    if (k == "realized_factor") return true;
  }
  return false;
}

// The highest index below `below` of a stage that runs threads, or -1.
int AsyncBelow(const std::vector<StageStats>& stats, int below) {
  for (int i = below - 1; i >= 0; --i) {
    if (stats[static_cast<size_t>(i)].threads > 0) return i;
  }
  return -1;
}

// "(upstream of echo: ...)" or "(downstream of echo: ...)" for the stage at
// `i`, when the pipeline echoes.
std::string Side(const std::vector<StageStats>& stats, int i) {
  int echo = -1;
  for (size_t j = 0; j < stats.size(); ++j) {
    if (IsEcho(stats[j])) echo = static_cast<int>(j);
  }
  if (echo < 0) return "";
  if (i < echo) return " (upstream of echo: echoing can help)";
  if (i > echo) return " (downstream of echo: echoing cannot help)";
  return "";
}

std::string BottleneckLine(const std::vector<StageStats>& stats) {
  const int n = static_cast<int>(stats.size());
  auto at = [&](int i) -> const StageStats& { return stats[static_cast<size_t>(i)]; };
  const int top = AsyncBelow(stats, n);
  if (top < 0) {  // everything runs in the consumer's thread
    int best = -1;
    double total = 0;
    for (int i = 0; i < n; ++i) {
      total += Work(at(i));
      if (Work(at(i)) > 0 && (best < 0 || Work(at(i)) > Work(at(best)))) best = i;
    }
    if (best < 0) return "bottleneck: not measured (every stage runs in the consumer's thread)";
    return fmt::format(
        "bottleneck: {}{}, {:.0f} % of the measured stage time (every stage runs "
        "in the consumer's thread)",
        at(best).name, Side(stats, best), 100 * Work(at(best)) / total);
  }
  const double waited = absl::ToDoubleSeconds(at(top).consumer_wait);
  if (!(waited > 0)) return "bottleneck: none: the consumer never waited for data";
  // Follow the wait down: the threads of `cur` run the stages between the
  // next asynchronous stage below and `cur`, and wait on that stage.
  int cur = top;
  while (true) {
    const int next = AsyncBelow(stats, cur);
    const double blocked = next >= 0 ? absl::ToDoubleSeconds(at(next).consumer_wait) : 0;
    int best = cur;
    double total = blocked;
    for (int i = next + 1; i <= cur; ++i) {
      total += Work(at(i));
      if (Work(at(i)) > Work(at(best))) best = i;
    }
    if (next >= 0 && blocked >= Work(at(best))) {  // mostly waiting further down
      cur = next;
      continue;
    }
    if (Work(at(best)) > 0) {
      return fmt::format(
          "bottleneck: {}{}, {:.0f} % of the measured time behind the consumer's {:.3f} s wait",
          at(best).name, Side(stats, best), 100 * Work(at(best)) / total, waited);
    }
    // Nothing measured its time: the stage the segment's threads pull from
    // first (the source, at the bottom), unless the segment is `cur` alone.
    const int named = next + 1 < cur ? next + 1 : cur;
    return fmt::format(
        "bottleneck: {}{}, where the consumer's {:.3f} s wait leads (its own time is not "
        "measured)",
        at(named).name, Side(stats, named), waited);
  }
}

std::string EchoLine(const StageStats& s) {
  const double fresh = s.Extra("fresh");
  if (!(fresh > 0)) return "";
  double e = s.Extra("chosen_factor");
  std::string what = "chosen e";
  if (!(e > 0)) {
    e = s.Extra("factor", s.Extra("max_factor"));
    what = s.Extra("factor", -1) >= 0 ? "e" : "max e";
  }
  const double realized = s.Extra("realized_factor");
  const double r = s.Extra("rate_ratio");
  if (s.input_wait <= absl::ZeroDuration()) {
    return fmt::format(
        "{}: realized factor {:.2f} ({} = {}); it never waited for its input: the upstream kept "
        "up, echoing cannot help here",
        s.name, realized, what, FormatNumber(e));
  }
  if (!(r > 0)) {
    return fmt::format("{}: realized factor {:.2f} ({} = {}); R not measured yet", s.name, realized,
                       what, FormatNumber(e));
  }
  return fmt::format("{}: realized factor {:.2f} against min({}, R) = {:.2f} (R = {:.2f} measured)",
                     s.name, realized, what, std::min(e, r), r);
}

}  // namespace

std::string FormatStatsVerdict(const std::vector<StageStats>& stats_in) {
  std::vector<StageStats> stats = stats_in;
  internal::MakeStageNamesUnique(&stats);
  if (stats.empty()) return "";
  std::string out = BottleneckLine(stats) + "\n";
  for (const StageStats& s : stats) {
    if (!IsEcho(s)) continue;
    if (std::string line = EchoLine(s); !line.empty()) out += line + "\n";
  }
  return out;
}

std::string FormatStatsTable(const std::vector<StageStats>& stats_in) {
  std::vector<StageStats> stats = stats_in;
  internal::MakeStageNamesUnique(&stats);
  std::string out =
      fmt::format("{:<16} {:>7} {:>12} {:>14} {:>12} {:>12}  {}\n", "stage", "threads", "elements",
                  "bytes", "input_wait", "cons_wait", "details");
  for (const StageStats& s : stats) {
    std::string details;
    for (const auto& [k, v] : s.extra) {
      if (!details.empty()) details += ", ";
      details += fmt::format("{}={}", k, FormatNumber(v));
    }
    out += fmt::format("{:<16} {:>7} {:>12} {:>14} {:>11.3f}s {:>11.3f}s  {}\n", s.name, s.threads,
                       s.elements, s.bytes, absl::ToDoubleSeconds(s.input_wait),
                       absl::ToDoubleSeconds(s.consumer_wait), details);
  }
  return out + FormatStatsVerdict(stats);
}

std::string StatsToJson(const std::vector<StageStats>& stats_in) {
  std::vector<StageStats> stats = stats_in;
  internal::MakeStageNamesUnique(&stats);
  std::string out = "[";
  for (size_t i = 0; i < stats.size(); ++i) {
    const StageStats& s = stats[i];
    if (i > 0) out += ", ";
    out += fmt::format(
        "{{\"stage\": {}, \"elements\": {}, \"bytes\": {}, \"input_wait_s\": {}, "
        "\"consumer_wait_s\": {}, \"threads\": {}",
        JsonQuote(s.name), s.elements, s.bytes, JsonNumber(absl::ToDoubleSeconds(s.input_wait)),
        JsonNumber(absl::ToDoubleSeconds(s.consumer_wait)), s.threads);
    for (const auto& [k, v] : s.extra) out += fmt::format(", {}: {}", JsonQuote(k), JsonNumber(v));
    out += "}";
  }
  return out + "]";
}

namespace internal {
namespace {

// Extra figures that are a level or a setting, not a count.
bool IsLevel(std::string_view key) {
  static constexpr std::string_view kLevels[] = {
      "parallelism", "depth",  "queued",        "buffer_size",    "buffered",
      "bytes_held",  "factor", "max_factor",    "pool_size",      "pooled",
      "rate_ratio",  "warmup", "chosen_factor", "epochs_started", "cycle_length"};
  for (std::string_view k : kLevels) {
    if (k == key) return true;
  }
  return false;
}

void AddRow(StageStats& total, const StageStats& more) {
  total.elements += more.elements;
  total.bytes += more.bytes;
  total.input_wait += more.input_wait;
  total.consumer_wait += more.consumer_wait;
  for (size_t i = 0; i < total.extra.size(); ++i) {
    auto& [key, value] = total.extra[i];
    const double v = more.Extra(key, 0);
    if (IsLevel(key)) {
      value = v;
    } else if (key.starts_with("peak_")) {
      value = std::max(value, v);
    } else {
      value += v;
    }
  }
  // Ratios of the sums.
  const double fresh = total.Extra("fresh", -1), repeats = total.Extra("repeats", -1);
  for (auto& [key, value] : total.extra) {
    const double emitted = static_cast<double>(total.elements);
    if (key == "realized_factor" && fresh >= 0) value = fresh > 0 ? emitted / fresh : 0;
    if (key == "repeat_fraction" && repeats >= 0) value = emitted > 0 ? repeats / emitted : 0;
  }
}

}  // namespace

void MakeStageNamesUnique(std::vector<StageStats>* stats) {
  std::set<std::string> used;
  for (const StageStats& s : *stats) used.insert(s.name);
  std::map<std::string, int> seen;  // occurrences so far
  for (StageStats& s : *stats) {
    if (++seen[s.name] == 1) continue;
    std::string name;
    for (int k = seen[s.name]; name.empty() || used.contains(name); ++k) {
      name = fmt::format("{}#{}", s.name, k);
    }
    used.insert(name);
    s.name = std::move(name);
  }
}

void AddStageStats(std::vector<StageStats>* total, const std::vector<StageStats>& more) {
  bool same = total->size() == more.size();
  for (size_t i = 0; same && i < more.size(); ++i) {
    same = (*total)[i].name == more[i].name && (*total)[i].extra.size() == more[i].extra.size();
  }
  if (!same) {
    *total = more;
    return;
  }
  for (size_t i = 0; i < more.size(); ++i) AddRow((*total)[i], more[i]);
}

int64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace internal

}  // namespace dataecho
