// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's SVG plot (ToSvg, declared in report.h).
#include <algorithm>
#include <cmath>

#include "fmt/format.h"
#include "regime.h"
#include "report.h"

namespace dataecho::bench {

std::string ToSvg(const BenchConfig& config, const BenchResult& result) {
  const std::vector<RunResult>& runs = result.points;
  constexpr double kW = 640, kH = 420, kLeft = 70, kRight = 20, kTop = 40, kBottom = 60;
  double max_e = 1, max_y = 1;
  for (const RunResult& r : runs) {
    max_e = std::max(max_e, r.echo);
    max_y = std::max({max_y, r.speedup, r.ideal_speedup, r.efficiency_max * r.ideal_speedup});
  }
  max_e = std::ceil(max_e);
  max_y = std::ceil(max_y + 0.5);
  auto x = [&](double e) {
    return kLeft + (e - 1) / std::max(1.0, max_e - 1) * (kW - kLeft - kRight);
  };
  auto y = [&](double s) { return kH - kBottom - s / max_y * (kH - kTop - kBottom); };
  // R of the ideal line: the configured one, or (unthrottled) the one measured
  // with the upstream alone; none known draws the ideal flat at 1.
  const double ratio =
      config.upstream_ratio > 0 ? config.upstream_ratio : Summarize(result.upstream_ratios).median;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      kW, kH);
  svg += fmt::format(
      "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">Speedup from data echoing "
      "(R = {}{:.3g}, step {:g} ms, {}, median of {})</text>\n",
      kW / 2, config.upstream_ratio > 0 ? "" : "measured ", ratio, config.step_ms,
      InsertName(config.insert), config.repeats);
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
  const double knee = ratio > 0 ? std::clamp(ratio, 1.0, max_e) : 1;
  for (double e : {1.0, knee, max_e})
    ideal +=
        fmt::format("{:.1f},{:.1f} ", x(e), y(ratio > 0 ? std::max(1.0, std::min(e, ratio)) : 1));
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#888\" stroke-width=\"2\" "
      "stroke-dasharray=\"6,4\"/>\n",
      ideal);
  // Measured points (medians), each with its range over the repeats.
  std::vector<RunResult> sorted = runs;
  std::sort(sorted.begin(), sorted.end(),
            [](const RunResult& a, const RunResult& b) { return a.echo < b.echo; });
  std::string line;
  for (const RunResult& r : sorted) line += fmt::format("{:.1f},{:.1f} ", x(r.echo), y(r.speedup));
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", line);
  bool any_out = false;
  for (const RunResult& r : sorted) {
    if (r.repeats > 1) {
      svg += fmt::format(
          "<line class=\"range\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
          "stroke=\"#1f77b4\" stroke-width=\"1.5\"/>\n",
          x(r.echo), y(r.efficiency_min * r.ideal_speedup), y(r.efficiency_max * r.ideal_speedup));
    }
    const char* fill = r.out_of_regime ? "#d62728" : "#1f77b4";
    svg += fmt::format(
        "<circle{} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\"><title>e={:g}: {:.2f}x "
        "(efficiency {:.3f}, {:.3f}-{:.3f} over {} repeat(s)){}</title></circle>\n",
        r.out_of_regime ? " class=\"out-of-regime\"" : "", x(r.echo), y(r.speedup), fill, r.echo,
        r.speedup, r.efficiency, r.efficiency_min, r.efficiency_max, r.repeats,
        r.out_of_regime ? ": out of regime, see the warnings" : "");
    if (r.out_of_regime) {
      any_out = true;
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"none\" stroke=\"#d62728\" "
          "stroke-width=\"2\"/><text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d62728\" "
          "font-weight=\"bold\">!</text>\n",
          x(r.echo), y(r.speedup), x(r.echo) + 11, y(r.speedup) - 8);
    }
  }
  // Legend.
  const double lx = kLeft + 16, ly = kTop + 14;
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"230\" height=\"{}\" fill=\"white\" stroke=\"#ccc\"/>\n",
      lx - 8, ly - 14, any_out ? 68 : 48);
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#1f77b4\" stroke-width=\"2\"/>"
      "<circle cx=\"{3}\" cy=\"{1}\" r=\"4.5\" fill=\"#1f77b4\"/>"
      "<text x=\"{4}\" y=\"{5}\">measured (median, range)</text>\n",
      lx, ly, lx + 30, lx + 15, lx + 40, ly + 4);
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\" stroke-width=\"2\" "
      "stroke-dasharray=\"6,4\"/><text x=\"{3}\" y=\"{4}\">ideal min(e, R)</text>\n",
      lx, ly + 20, lx + 30, lx + 40, ly + 24);
  if (any_out) {
    svg += fmt::format(
        "<circle cx=\"{0}\" cy=\"{1}\" r=\"9\" fill=\"none\" stroke=\"#d62728\" "
        "stroke-width=\"2\"/><text x=\"{2}\" y=\"{3}\" fill=\"#d62728\">out of regime "
        "({4} warning(s))</text>\n",
        lx + 15, ly + 40, lx + 40, ly + 44, result.warnings.size());
  }
  return svg + "</svg>\n";
}

}  // namespace dataecho::bench
