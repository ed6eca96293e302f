// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "report.h"

#include "dataecho/text.h"
#include "fmt/format.h"
#include "regime.h"

namespace dataecho::bench {

namespace {

// A JSON array of `items`, each written by `format`: on one line
// ("[a, b]"), or with `one_a_line` each on a line of its own
// ("[\n  a,\n  b\n]").
template <typename T, typename Format>
std::string JsonList(const std::vector<T>& items, Format format, bool one_a_line = false) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (one_a_line) {
      out += i == 0 ? "\n  " : ",\n  ";
    } else if (i > 0) {
      out += ", ";
    }
    out += format(items[i]);
  }
  return out + (one_a_line ? "\n]" : "]");
}

std::string JsonArray(const std::vector<double>& values) {
  return JsonList(values, [](double v) { return JsonNumber(v); });
}

std::string JsonStrings(const std::vector<std::string>& values) {
  return JsonList(values, [](const std::string& v) { return JsonQuote(v); });
}

// The fields of a point that the JSON had before the repeats (one run per
// factor), and the trainer's lost time.
std::string RunFields(const RunResult& r) {
  std::string auto_fields;
  if (r.insert == "auto") {
    auto_fields =
        fmt::format(", \"auto_insert\": {}, \"auto_echo\": {}, \"decisions\": {}",
                    JsonQuote(r.auto_insert), JsonNumber(r.auto_echo), JsonStrings(r.decisions));
  }
  return fmt::format(
             "\"echo\": {}, \"insert\": {}, \"steps\": {}, \"steps_per_sec\": {}, \"speedup\": {}, "
             "\"ideal_speedup\": {}, \"efficiency\": {}, \"fresh_examples\": {}, "
             "\"repeated_examples\": "
             "{}, \"realized_echo_factor\": {}, \"upstream_bytes\": {}, "
             "\"consumer_idle_fraction\": {}, "
             "\"trainer_lost_fraction\": {}{}",
             JsonNumber(r.echo), JsonQuote(r.insert), r.steps, JsonNumber(r.steps_per_sec),
             JsonNumber(r.speedup), JsonNumber(r.ideal_speedup), JsonNumber(r.efficiency),
             r.fresh_examples, r.repeated_examples, JsonNumber(r.realized_echo_factor),
             r.upstream_bytes, JsonNumber(r.consumer_idle_fraction),
             JsonNumber(r.trainer_lost_fraction),
             r.insert == "adaptive"
                 ? fmt::format(", \"rate_ratio_estimate\": {}", JsonNumber(r.rate_ratio_estimate))
                 : std::string()) +
         auto_fields;
}

// A point of "runs": its fields and the spread over its repeats.
std::string PointJson(const RunResult& r) {
  return fmt::format(
      "{{{}, \"repeats\": {}, \"steps_per_sec_samples\": {}, \"steps_per_sec_min\": {}, "
      "\"steps_per_sec_max\": {}, \"steps_per_sec_spread\": {}, \"efficiency_min\": {}, "
      "\"efficiency_max\": {}, \"out_of_regime\": {}}}",
      RunFields(r), r.repeats, JsonArray(r.steps_per_sec_samples), JsonNumber(r.steps_per_sec_min),
      JsonNumber(r.steps_per_sec_max),
      JsonNumber(Spread{r.steps_per_sec, r.steps_per_sec_min, r.steps_per_sec_max}.Relative()),
      JsonNumber(r.efficiency_min), JsonNumber(r.efficiency_max),
      r.out_of_regime ? "true" : "false");
}

// A run of "run_log": one repeat at one factor.
std::string RunLogJson(const RunResult& r) {
  return fmt::format(
      "{{\"repeat\": {}, \"echo\": {}, \"steps_per_sec\": {}, \"fresh_examples\": {}, "
      "\"repeated_examples\": {}, \"upstream_bytes\": {}, \"consumer_idle_fraction\": {}, "
      "\"trainer_lost_fraction\": {}}}",
      r.repeat + 1, JsonNumber(r.echo), JsonNumber(r.steps_per_sec), r.fresh_examples,
      r.repeated_examples, r.upstream_bytes, JsonNumber(r.consumer_idle_fraction),
      JsonNumber(r.trainer_lost_fraction));
}

}  // namespace

std::string FormatRunHeader() {
  return fmt::format("{:>7} {:>6} {:>5} {:>9} {:>8} {:>8} {:>10} {:>9} {:>6} {:>6}\n", "run",
                     "repeat", "echo", "steps/s", "speedup", "fresh", "repeats", "up_MB", "idle",
                     "lost");
}

std::string FormatRunRow(const RunResult& r, int index, int total, double speedup) {
  return fmt::format(
      "{:>7} {:>6} {:>5.2f} {:>9.1f} {:>8} {:>8} {:>10} {:>9.1f} {:>5.1f}% {:>5.1f}%\n",
      fmt::format("{}/{}", index, total), r.repeat + 1, r.echo, r.steps_per_sec,
      speedup > 0 ? fmt::format("{:.2f}x", speedup) : std::string("-"), r.fresh_examples,
      r.repeated_examples, static_cast<double>(r.upstream_bytes) / 1e6,
      100 * r.consumer_idle_fraction, 100 * r.trainer_lost_fraction);
}

std::string FormatTable(const BenchConfig& config, const BenchResult& result) {
  std::string out = fmt::format(
      "\nmedians of {} repeat(s); spread = (max - min) / median of steps/s; effic. range over the "
      "repeats, each run against its repeat's baseline\n",
      config.repeats);
  out += fmt::format(
      "{:>5} {:>15} {:>9} {:>6} {:>7} {:>9} {:>7} {:>13} {:>8} {:>10} {:>9} {:>6} {:>6}\n", "echo",
      "insert", "steps/s", "spread", "speedup", "ideal", "effic.", "effic. range", "fresh",
      "repeats", "up_MB", "idle", "lost");
  for (const RunResult& r : result.points) {
    out += fmt::format(
        "{:>5.2f} {:>15} {:>9.1f} {:>5.1f}% {:>6.2f}x {:>8.2f}x {:>7.3f} {:>6.3f}-{:<6.3f} {:>8} "
        "{:>10} {:>9.1f} {:>5.1f}% {:>5.1f}%{}\n",
        r.echo, r.insert, r.steps_per_sec,
        100 * Spread{r.steps_per_sec, r.steps_per_sec_min, r.steps_per_sec_max}.Relative(),
        r.speedup, r.ideal_speedup, r.efficiency, r.efficiency_min, r.efficiency_max,
        r.fresh_examples, r.repeated_examples, static_cast<double>(r.upstream_bytes) / 1e6,
        100 * r.consumer_idle_fraction, 100 * r.trainer_lost_fraction, r.out_of_regime ? " !" : "");
  }
  for (const RunResult& r : result.points) {
    if (r.insert != "auto" || r.decisions.empty()) continue;
    out += fmt::format("auto (largest e = {:g}), decisions of its median run:\n", r.echo);
    for (const std::string& d : r.decisions) out += "  " + d + "\n";
  }
  if (result.has_grid) out += FormatGrid(result.grid);
  const Spread upstream = Summarize(result.upstream_ratios);
  out += fmt::format(
      "upstream alone: median {:.2f} ({:.2f}-{:.2f}) steps per batch (target R = {:g})\n",
      upstream.median, upstream.min, upstream.max, config.upstream_ratio);
  for (const std::string& w : result.warnings) out += "warning: " + w + "\n";
  if (result.warnings.empty()) {
    const double nominal = NominalStepsPerSec(config.upstream_ratio, config.step_ms);
    const std::string limits =
        fmt::format("no efficiency above {:g}, no spread above {:g}%, no trainer loss above {:g}%",
                    config.max_efficiency, 100 * config.max_spread, 100 * config.max_trainer_lost);
    out += nominal > 0 ? fmt::format(
                             "regime check: ok (baseline within {:g}% of its nominal {:.1f} "
                             "steps/s, {})\n",
                             100 * config.baseline_tolerance, nominal, limits)
                       : fmt::format(
                             "regime check: ok ({}; unthrottled, so no nominal baseline to "
                             "check)\n",
                             limits);
  }
  return out;
}

std::string ToJson(const BenchConfig& config, const BenchResult& result) {
  const Spread upstream = Summarize(result.upstream_ratios);
  const double nominal = NominalStepsPerSec(config.upstream_ratio, config.step_ms);
  std::string out = fmt::format(
      "{{\"upstream_ratio\": {}, \"measured_upstream_ratio\": {}, \"step_ms\": {}, "
      "\"batch_size\": {}, \"shuffle_buffer\": {}, \"pipeline_threads\": {}, \"cpus\": {}, "
      "\"seed\": {}, "
      "\"repeats\": {}, "
      "\"measured_upstream_ratio_min\": {}, \"measured_upstream_ratio_max\": {}, "
      "\"measured_upstream_ratios\": {}, \"nominal_steps_per_sec\": {}, "
      "\"baseline_tolerance\": {}, \"max_efficiency\": {}, \"max_spread\": {}, "
      "\"max_trainer_lost\": {},\n\"warnings\": {},\n",
      JsonNumber(config.upstream_ratio), JsonNumber(upstream.median), JsonNumber(config.step_ms),
      config.batch_size, config.shuffle_buffer, config.pipeline_threads, config.cpus, config.seed,
      config.repeats, JsonNumber(upstream.min), JsonNumber(upstream.max),
      JsonArray(result.upstream_ratios), nominal > 0 ? JsonNumber(nominal) : "null",
      JsonNumber(config.baseline_tolerance), JsonNumber(config.max_efficiency),
      JsonNumber(config.max_spread), JsonNumber(config.max_trainer_lost),
      JsonStrings(result.warnings));
  if (result.has_grid) out += GridJsonFields(result.grid) + ",\n";
  out += "\"runs\": " + JsonList(result.points, PointJson, /*one_a_line=*/true);
  out += ",\n\"run_log\": " + JsonList(result.runs, RunLogJson, /*one_a_line=*/true);
  return out + "}\n";
}

}  // namespace dataecho::bench
