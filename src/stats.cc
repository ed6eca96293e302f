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

// What the pipeline measured at its consumer's pulls (the top row's
// consumer_* figures, stats.h), if it did.
struct Consumer {
  double step = 0;     // seconds outside Next(): the consumer's own work
  double in_next = 0;  // seconds inside Next()
  double pulls = 0;
  bool measured() const { return pulls >= 2 && step + in_next > 0; }
  double elapsed() const { return step + in_next; }
};

Consumer ConsumerOf(const std::vector<StageStats>& stats) {
  Consumer c;
  if (stats.empty()) return c;
  const StageStats& top = stats.back();
  c.step = top.Extra("consumer_step_s");
  c.in_next = top.Extra("consumer_in_next_s");
  c.pulls = top.Extra("consumer_pulls");
  return c;
}

bool HasExtra(const StageStats& s, std::string_view key) {
  for (const auto& [k, v] : s.extra) {
    if (k == key) return true;
  }
  return false;
}

// The consumer is the bottleneck: it spent under 10 % of its time waiting
// inside Next(), or (not measured) the last queue's producer sat on a full
// queue longer than the consumer waited for it. The verdict line, or "".
std::string ConsumerBoundLine(const std::vector<StageStats>& stats) {
  const Consumer c = ConsumerOf(stats);
  const int top = AsyncBelow(stats, static_cast<int>(stats.size()));
  const StageStats* queue = top >= 0 ? &stats[static_cast<size_t>(top)] : nullptr;
  const double full = queue != nullptr ? queue->Extra("producer_blocked_s") : 0;
  const double waited = queue != nullptr ? absl::ToDoubleSeconds(queue->consumer_wait) : 0;
  std::string queue_part;
  if (queue != nullptr && HasExtra(*queue, "producer_blocked_s")) {
    queue_part = fmt::format("; {}'s producer sat on a full queue {:.3f} s", queue->name, full);
  }
  if (c.measured()) {
    if (!(c.in_next < 0.1 * c.elapsed())) return "";
    return fmt::format(
        "bottleneck: the consumer: it spent {:.0f} % of its {:.3f} s inside Next() ({:.3f} s "
        "waiting for data){}: the input pipeline keeps up (more echoing cannot help)",
        100 * c.in_next / c.elapsed(), c.elapsed(), c.in_next, queue_part);
  }
  if (queue == nullptr || !(full > waited) || !(full > 0)) return "";
  return fmt::format(
      "bottleneck: the consumer: it waited {:.3f} s for data{}: the input pipeline keeps up "
      "(more echoing cannot help)",
      waited, queue_part);
}

std::string BottleneckLine(const std::vector<StageStats>& stats) {
  const int n = static_cast<int>(stats.size());
  auto at = [&](int i) -> const StageStats& { return stats[static_cast<size_t>(i)]; };
  if (std::string line = ConsumerBoundLine(stats); !line.empty()) return line;
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

// R for the echo stage at `i`: (upstream time per fresh item) / (consumer
// time per element at the echo), from the consumer's pulls and the boundary
// Prefetch below the echo (stats.h, "THE CONSUMER"); the stage's own
// estimate "rate_ratio" without them (0: not measured). `how` says which.
double MeasuredR(const std::vector<StageStats>& stats, int i, std::string* how) {
  const StageStats& s = stats[static_cast<size_t>(i)];
  const Consumer c = ConsumerOf(stats);
  const int boundary = AsyncBelow(stats, i);
  const double fresh = s.Extra("fresh");
  if (c.measured() && boundary >= 0 && fresh > 0 && s.elements > 0 &&
      HasExtra(stats[static_cast<size_t>(boundary)], "producer_blocked_s")) {
    const double active =
        c.elapsed() - stats[static_cast<size_t>(boundary)].Extra("producer_blocked_s");
    if (active > 0 && c.step > 0) {
      *how = "measured at the consumer's pulls";
      return (active / fresh) / (c.step / static_cast<double>(s.elements));
    }
  }
  *how = "measured";  // the stage's own estimate
  return s.Extra("rate_ratio");
}

std::string EchoLine(const std::vector<StageStats>& stats, int i, bool consumer_bound) {
  const StageStats& s = stats[static_cast<size_t>(i)];
  const double fresh = s.Extra("fresh");
  if (!(fresh > 0)) return "";
  double e = s.Extra("chosen_factor");
  std::string what = "chosen e";
  if (!(e > 0)) {
    e = s.Extra("factor", s.Extra("max_factor"));
    what = s.Extra("factor", -1) >= 0 ? "e" : "max e";
  }
  const double realized = s.Extra("realized_factor");
  std::string how;
  const double r = MeasuredR(stats, i, &how);
  if (consumer_bound) {
    const std::string r_part =
        how.starts_with("measured") && r > 0 ? fmt::format(" (R = {:.2f} {})", r, how) : "";
    if (realized > 1.05) {
      return fmt::format(
          "{}: realized factor {:.2f} ({} = {}) keeps the consumer busy: it is the bottleneck{}",
          s.name, realized, what, FormatNumber(e), r_part);
    }
    return fmt::format(
        "{}: realized factor {:.2f} ({} = {}); the consumer is the bottleneck{}: echoing cannot "
        "help here",
        s.name, realized, what, FormatNumber(e), r_part);
  }
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
  return fmt::format("{}: realized factor {:.2f} against min({}, R) = {:.2f} (R = {:.2f} {})",
                     s.name, realized, what, std::min(e, r), r, how);
}

}  // namespace

std::string FormatStatsVerdict(const std::vector<StageStats>& stats_in) {
  std::vector<StageStats> stats = stats_in;
  internal::MakeStageNamesUnique(&stats);
  if (stats.empty()) return "";
  const std::string bottleneck = BottleneckLine(stats);
  std::string out = bottleneck + "\n";
  const bool consumer_bound = bottleneck.starts_with("bottleneck: the consumer");
  for (size_t i = 0; i < stats.size(); ++i) {
    if (!IsEcho(stats[i])) continue;
    // Auto placement's idle echo stages (passing through) say nothing.
    if (stats[i].name.starts_with("echo:") && stats[i].Extra("realized_factor") <= 1.0001) continue;
    if (std::string line = EchoLine(stats, static_cast<int>(i), consumer_bound); !line.empty())
      out += line + "\n";
  }
  for (const StageStats& s : stats) {
    for (const std::string& note : s.notes) out += s.name + ": " + note + "\n";
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
    if (!s.notes.empty()) {
      out += ", \"decisions\": [";
      for (size_t j = 0; j < s.notes.size(); ++j)
        out += (j == 0 ? "" : ", ") + JsonQuote(s.notes[j]);
      out += "]";
    }
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
      "rate_ratio",  "warmup", "chosen_factor", "epochs_started", "cycle_length",
      "placement",   "cores",  "ram_budget_mb"};
  for (std::string_view k : kLevels) {
    if (k == key) return true;
  }
  return false;
}

void AddRow(StageStats& total, const StageStats& more) {
  total.notes = more.notes;  // the latest run's
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
