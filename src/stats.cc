// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/stats.h"

#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "dataecho/internal/json.h"
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

}  // namespace

std::string FormatStatsTable(const std::vector<StageStats>& stats) {
  std::string out = fmt::format("{:<14} {:>12} {:>14} {:>12} {:>12}  {}\n", "stage", "elements",
                                "bytes", "input_wait", "cons_wait", "details");
  for (const StageStats& s : stats) {
    std::string details;
    for (const auto& [k, v] : s.extra) {
      if (!details.empty()) details += ", ";
      details += fmt::format("{}={}", k, FormatNumber(v));
    }
    out += fmt::format("{:<14} {:>12} {:>14} {:>11.3f}s {:>11.3f}s  {}\n", s.name, s.elements,
                       s.bytes, absl::ToDoubleSeconds(s.input_wait),
                       absl::ToDoubleSeconds(s.consumer_wait), details);
  }
  return out;
}

std::string StatsToJson(const std::vector<StageStats>& stats) {
  std::string out = "[";
  for (size_t i = 0; i < stats.size(); ++i) {
    const StageStats& s = stats[i];
    if (i > 0) out += ", ";
    out += fmt::format(
        "{{\"stage\": {}, \"elements\": {}, \"bytes\": {}, \"input_wait_s\": {}, "
        "\"consumer_wait_s\": {}",
        internal::JsonQuote(s.name), s.elements, s.bytes,
        internal::JsonNumber(absl::ToDoubleSeconds(s.input_wait)),
        internal::JsonNumber(absl::ToDoubleSeconds(s.consumer_wait)));
    for (const auto& [k, v] : s.extra)
      out += fmt::format(", {}: {}", internal::JsonQuote(k), internal::JsonNumber(v));
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

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.6g}", v);
}

int64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace internal

}  // namespace dataecho
