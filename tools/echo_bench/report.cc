// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "report.h"

#include <algorithm>
#include <cmath>

#include "dataecho/internal/json.h"
#include "fmt/format.h"

namespace dataecho::bench {

using internal::JsonNumber;
using internal::JsonQuote;

std::string FormatTable(const std::vector<RunResult>& runs) {
  std::string out = fmt::format("{:>5} {:>15} {:>9} {:>6} {:>10} {:>8} {:>8} {:>10} {:>9} {:>6}\n",
                                "echo", "insert", "steps/s", "speedup", "ideal", "effic.", "fresh",
                                "repeats", "up_MB", "idle");
  for (const RunResult& r : runs) {
    out += fmt::format(
        "{:>5.2f} {:>15} {:>9.1f} {:>6.2f}x {:>9.2f}x {:>8.3f} {:>8} {:>10} {:>9.1f} {:>5.1f}%\n",
        r.echo, r.insert, r.steps_per_sec, r.speedup, r.ideal_speedup, r.efficiency,
        r.fresh_examples, r.repeated_examples, static_cast<double>(r.upstream_bytes) / 1e6,
        100 * r.consumer_idle_fraction);
  }
  return out;
}

std::string ToJson(const BenchConfig& config, double measured_ratio,
                   const std::vector<RunResult>& runs) {
  std::string out = fmt::format(
      "{{\"upstream_ratio\": {}, \"measured_upstream_ratio\": {}, \"step_ms\": {}, \"batch_size\": "
      "{}, "
      "\"shuffle_buffer\": {}, \"seed\": {}, \"runs\": [",
      JsonNumber(config.upstream_ratio), JsonNumber(measured_ratio), JsonNumber(config.step_ms),
      config.batch_size, config.shuffle_buffer, config.seed);
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    out += fmt::format(
        "{}\n  {{\"echo\": {}, \"insert\": {}, \"steps\": {}, \"steps_per_sec\": {}, \"speedup\": "
        "{}, "
        "\"ideal_speedup\": {}, \"efficiency\": {}, \"fresh_examples\": {}, \"repeated_examples\": "
        "{}, "
        "\"realized_echo_factor\": {}, \"upstream_bytes\": {}, \"consumer_idle_fraction\": {}{}}}",
        i == 0 ? "" : ",", JsonNumber(r.echo), JsonQuote(r.insert), r.steps,
        JsonNumber(r.steps_per_sec), JsonNumber(r.speedup), JsonNumber(r.ideal_speedup),
        JsonNumber(r.efficiency), r.fresh_examples, r.repeated_examples,
        JsonNumber(r.realized_echo_factor), r.upstream_bytes, JsonNumber(r.consumer_idle_fraction),
        r.insert == "adaptive"
            ? fmt::format(", \"rate_ratio_estimate\": {}", JsonNumber(r.rate_ratio_estimate))
            : std::string());
  }
  return out + "\n]}\n";
}

std::string ToSvg(const BenchConfig& config, const std::vector<RunResult>& runs) {
  constexpr double kW = 640, kH = 420, kLeft = 70, kRight = 20, kTop = 40, kBottom = 60;
  double max_e = 1, max_y = 1;
  for (const RunResult& r : runs) {
    max_e = std::max(max_e, r.echo);
    max_y = std::max({max_y, r.speedup, r.ideal_speedup});
  }
  max_e = std::ceil(max_e);
  max_y = std::ceil(max_y + 0.5);
  auto x = [&](double e) {
    return kLeft + (e - 1) / std::max(1.0, max_e - 1) * (kW - kLeft - kRight);
  };
  auto y = [&](double s) { return kH - kBottom - s / max_y * (kH - kTop - kBottom); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      kW, kH);
  svg += fmt::format(
      "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">Speedup from data echoing "
      "(R = {:g}, step {:g} ms, {})</text>\n",
      kW / 2, config.upstream_ratio, config.step_ms, InsertName(config.insert));
  // Axes, grid and ticks.
  for (int e = 1; e <= static_cast<int>(max_e); ++e) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x(e), kTop, kH - kBottom, kH - kBottom + 18, e);
  }
  for (int s = 0; s <= static_cast<int>(max_y); ++s) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}x</text>\n",
        kLeft, y(s), kW - kRight, kLeft - 8, y(s) + 4, s);
  }
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
      kLeft, kTop, kH - kBottom, kW - kRight);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">echo factor e</text>\n",
                     (kLeft + kW - kRight) / 2, kH - 18);
  svg += fmt::format(
      "<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">"
      "speedup in training steps/s over e = 1</text>\n",
      (kTop + kH - kBottom) / 2);
  // Ideal min(e, R): dashed, with its knee at e = R.
  std::string ideal;
  const double knee = config.upstream_ratio > 0 ? std::min(config.upstream_ratio, max_e) : 1;
  for (double e : {1.0, knee, max_e})
    ideal += fmt::format("{:.1f},{:.1f} ", x(e),
                         y(config.upstream_ratio > 0 ? std::min(e, config.upstream_ratio) : 1));
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#888\" stroke-width=\"2\" "
      "stroke-dasharray=\"6,4\"/>\n",
      ideal);
  // Measured points.
  std::vector<RunResult> sorted = runs;
  std::sort(sorted.begin(), sorted.end(),
            [](const RunResult& a, const RunResult& b) { return a.echo < b.echo; });
  std::string line;
  for (const RunResult& r : sorted) line += fmt::format("{:.1f},{:.1f} ", x(r.echo), y(r.speedup));
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", line);
  for (const RunResult& r : sorted) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#1f77b4\"><title>e={:g}: {:.2f}x "
        "(efficiency {:.3f})</title></circle>\n",
        x(r.echo), y(r.speedup), r.echo, r.speedup, r.efficiency);
  }
  // Legend.
  const double lx = kLeft + 16, ly = kTop + 14;
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"190\" height=\"48\" fill=\"white\" stroke=\"#ccc\"/>\n",
      lx - 8, ly - 14);
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#1f77b4\" stroke-width=\"2\"/>"
      "<circle cx=\"{3}\" cy=\"{1}\" r=\"4.5\" fill=\"#1f77b4\"/>"
      "<text x=\"{4}\" y=\"{5}\">measured</text>\n",
      lx, ly, lx + 30, lx + 15, lx + 40, ly + 4);
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\" stroke-width=\"2\" "
      "stroke-dasharray=\"6,4\"/><text x=\"{3}\" y=\"{4}\">ideal min(e, R)</text>\n",
      lx, ly + 20, lx + 30, lx + 40, ly + 24);
  return svg + "</svg>\n";
}

}  // namespace dataecho::bench
