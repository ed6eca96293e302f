// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench's repeats and regime check as pure functions over constructed
// measurements (regime.h), and what the table, the JSON and the plot make of
// them (report.h). No clock: the numbers are given.
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "config.h"
#include "gtest/gtest.h"
#include "regime.h"
#include "report.h"

namespace dataecho::bench {
namespace {

RunResult Measured(double echo, int repeat, double steps_per_sec, double ideal) {
  RunResult r;
  r.echo = echo;
  r.insert = "before_augment";
  r.repeat = repeat;
  r.steps = 100;
  r.steps_per_sec = steps_per_sec;
  r.ideal_speedup = ideal;
  r.fresh_examples = static_cast<int64_t>(steps_per_sec);  // tells the runs apart
  return r;
}

BenchConfig Config(int repeats) {
  BenchConfig c;
  c.echo = {1, 2};
  c.upstream_ratio = 6;
  c.step_ms = 2;  // nominal baseline: 1 / (6 x 2 ms) = 83.33 steps/s
  c.repeats = repeats;
  return c;
}

TEST(EchoBenchRegimeTest, MedianAndRange) {
  const Spread odd = Summarize({3, 1, 2});
  EXPECT_EQ(odd.median, 2);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 3);
  EXPECT_DOUBLE_EQ(odd.Relative(), 1.0);
  EXPECT_EQ(Summarize({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(Summarize({7}).Relative(), 0);
  EXPECT_EQ(Summarize({}).median, 0);
}

TEST(EchoBenchRegimeTest, FactorsStartWithTheBaselineOnce) {
  BenchConfig c;
  c.echo = {2, 1, 4, 2};
  EXPECT_EQ(Factors(c), (std::vector<double>{1, 2, 4}));
  c.insert = Insert::kAdaptive;
  c.echo = {1};
  c.max_echo = 3;
  EXPECT_EQ(Factors(c), (std::vector<double>{1, 3}));
  c.max_echo = 1;
  EXPECT_EQ(Factors(c), (std::vector<double>{1}));
}

// Over N repeats of N factors each factor, the baseline included, runs once
// in every position: a load that comes and goes cannot hit only one of them.
TEST(EchoBenchRegimeTest, OrderRotatesPerRepeat) {
  const std::vector<double> f = {1, 2, 4};
  EXPECT_EQ(RepeatOrder(f, 0), (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(RepeatOrder(f, 1), (std::vector<double>{2, 4, 1}));
  EXPECT_EQ(RepeatOrder(f, 2), (std::vector<double>{4, 1, 2}));
  EXPECT_EQ(RepeatOrder(f, 3), f);
  EXPECT_EQ(RepeatOrder({1}, 5), (std::vector<double>{1}));
}

// The case: under other load, the baseline of one repeat dropped from
// 82 to 41 steps/s and e = 2 came out at efficiency 2.004. The median over
// the repeats stays at the undisturbed figure; the disturbed repeat shows in
// the range, and the spread check names it.
TEST(EchoBenchRegimeTest, OneSlowBaselineDoesNotMoveTheMedian) {
  const std::vector<RunResult> runs = {Measured(1, 0, 83.0, 1),  Measured(2, 0, 166.0, 2),
                                       Measured(2, 1, 164.4, 2), Measured(1, 1, 41.0, 1),
                                       Measured(1, 2, 83.5, 1),  Measured(2, 2, 167.0, 2)};
  BenchConfig config = Config(3);
  std::vector<RunResult> points = SummarizePoints(runs, Factors(config));
  ASSERT_EQ(points.size(), 2u);
  const RunResult& base = points[0];
  EXPECT_EQ(base.echo, 1);
  EXPECT_EQ(base.steps_per_sec, 83.0);
  EXPECT_EQ(base.speedup, 1);
  EXPECT_EQ(base.efficiency, 1);
  EXPECT_EQ(base.repeats, 3);
  EXPECT_EQ(base.steps_per_sec_samples, (std::vector<double>{83.0, 41.0, 83.5}));
  EXPECT_EQ(base.steps_per_sec_min, 41.0);
  EXPECT_EQ(base.steps_per_sec_max, 83.5);
  EXPECT_EQ(base.fresh_examples, 83);  // the counts of the median run
  const RunResult& two = points[1];
  EXPECT_EQ(two.steps_per_sec, 166.0);
  EXPECT_DOUBLE_EQ(two.speedup, 2.0);
  EXPECT_DOUBLE_EQ(two.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(two.efficiency_min, 167.0 / 83.5 / 2);
  EXPECT_DOUBLE_EQ(two.efficiency_max, 164.4 / 41.0 / 2);  // the disturbed repeat
  EXPECT_EQ(two.fresh_examples, 166);
  const std::vector<std::string> warnings = CheckRegime(config, points);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "e=1: steps/s varied by 51.2% over the 3 repeats (41.0-83.5, limit 10%): the load on "
            "the machine changed during the bench");
  EXPECT_TRUE(points[0].out_of_regime);
  EXPECT_FALSE(points[1].out_of_regime);
  // With a looser limit, the medians pass the check.
  config.max_spread = 0.6;
  EXPECT_TRUE(CheckRegime(config, points).empty());
  EXPECT_FALSE(points[0].out_of_regime);
}

// With one run per factor the same disturbance is caught by the check: the
// baseline is 51 % below its nominal rate and e = 2 is above 1.03.
TEST(EchoBenchRegimeTest, SlowBaselineAndImpossibleEfficiencyWarn) {
  BenchConfig config = Config(1);
  std::vector<RunResult> points =
      SummarizePoints({Measured(1, 0, 41.0, 1), Measured(2, 0, 164.3, 2)}, Factors(config));
  const std::vector<std::string> warnings = CheckRegime(config, points);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("baseline (e=1) ran at 41.0 steps/s, 50.8% below its nominal 83.3"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("e=2: efficiency 2.004 is above 1.03"), std::string::npos)
      << warnings[1];
  EXPECT_TRUE(points[0].out_of_regime);
  EXPECT_TRUE(points[1].out_of_regime);
}

TEST(EchoBenchRegimeTest, ThresholdsAreTheConfiguredOnes) {
  BenchConfig config = Config(1);
  auto check = [&](double baseline, double two) {
    std::vector<RunResult> points =
        SummarizePoints({Measured(1, 0, baseline, 1), Measured(2, 0, two, 2)}, Factors(config));
    return CheckRegime(config, points).size();
  };
  const double nominal = 1000.0 / 12;
  EXPECT_EQ(check(nominal * 0.951, nominal * 0.951 * 2), 0u);  // within 5 %
  EXPECT_EQ(check(nominal * 0.949, nominal * 0.949 * 2), 1u);
  EXPECT_EQ(check(nominal * 1.049, nominal * 1.049 * 2), 0u);
  EXPECT_EQ(check(nominal * 1.051, nominal * 1.051 * 2), 1u);
  EXPECT_EQ(check(nominal, nominal * 2.058), 0u);  // efficiency 1.029
  EXPECT_EQ(check(nominal, nominal * 2.062), 1u);
  config.baseline_tolerance = 0.6;
  config.max_efficiency = 1.1;
  EXPECT_EQ(check(41.0, 82.0 * 1.09), 0u);
  EXPECT_EQ(check(41.0, 82.0 * 1.11), 1u);
  // Unthrottled: no nominal rate, only the efficiency is checked.
  config.upstream_ratio = 0;
  EXPECT_EQ(NominalStepsPerSec(0, 2), 0);
  EXPECT_EQ(check(1.0, 1.0), 0u);
  // The spread of a factor over the repeats.
  config = Config(2);
  auto spread = [&](double a, double b) {
    std::vector<RunResult> points =
        SummarizePoints({Measured(1, 0, nominal, 1), Measured(1, 1, nominal, 1),
                         Measured(2, 0, a, 2), Measured(2, 1, b, 2)},
                        Factors(config));
    return CheckRegime(config, points);
  };
  EXPECT_TRUE(spread(160, 175).empty());   // 15 / 167.5 = 9.0 %
  ASSERT_EQ(spread(160, 180).size(), 1u);  // 20 / 170 = 11.8 %
  EXPECT_NE(spread(160, 180)[0].find("e=2: steps/s varied by 11.8% over the 2 repeats"),
            std::string::npos);
  // The trainer loop's lost time (its CPU taken by other load).
  config = Config(1);
  auto lost = [&](double fraction) {
    std::vector<RunResult> points = SummarizePoints(
        {Measured(1, 0, nominal, 1), Measured(2, 0, 2 * nominal, 2)}, Factors(config));
    points[1].trainer_lost_fraction = fraction;
    std::vector<std::string> warnings = CheckRegime(config, points);
    EXPECT_EQ(points[1].out_of_regime, !warnings.empty());
    return warnings;
  };
  EXPECT_TRUE(lost(0.049).empty());
  ASSERT_EQ(lost(0.78).size(), 1u);
  EXPECT_EQ(lost(0.78)[0],
            "e=2: the trainer loop was neither waiting for a batch nor stepping for 78.0% of the "
            "run (limit 5%): other load took its CPU, so steps/s measure the machine");
  // R below 1: the trainer's step is the limit.
  EXPECT_DOUBLE_EQ(NominalStepsPerSec(0.5, 2), 500);
}

BenchResult Disturbed(const BenchConfig& config) {
  BenchResult result;
  result.upstream_ratios = {5.1};
  result.runs = {Measured(1, 0, 41.0, 1), Measured(2, 0, 164.3, 2)};
  result.points = SummarizePoints(result.runs, Factors(config));
  result.warnings = CheckRegime(config, result.points);
  return result;
}

TEST(EchoBenchRegimeTest, WarningsReachTheTableTheJsonAndThePlot) {
  const BenchConfig config = Config(1);
  const BenchResult result = Disturbed(config);
  const std::string table = FormatTable(config, result);
  EXPECT_NE(table.find("effic."), std::string::npos) << table;
  EXPECT_NE(table.find("warning: baseline (e=1) ran at 41.0"), std::string::npos) << table;
  EXPECT_NE(table.find("warning: e=2: efficiency 2.004"), std::string::npos) << table;
  EXPECT_NE(table.find("% !\n"), std::string::npos) << table;  // the marked rows
  EXPECT_EQ(table.find("regime check: ok"), std::string::npos) << table;

  const std::string json = ToJson(config, result);
  EXPECT_NE(json.find("\"warnings\": [\"baseline (e=1) ran at 41.0 steps/s"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"out_of_regime\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"nominal_steps_per_sec\": 83.3333"), std::string::npos) << json;
  EXPECT_NE(json.find("\"run_log\": ["), std::string::npos) << json;

  const std::string svg = ToSvg(config, result);
  EXPECT_NE(svg.find("class=\"out-of-regime\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("out of regime (2 warning(s))"), std::string::npos) << svg;
}

TEST(EchoBenchRegimeTest, CleanRunsSayTheCheckPassed) {
  BenchConfig config = Config(2);
  BenchResult result;
  result.upstream_ratios = {6.0, 6.01};
  result.runs = {Measured(1, 0, 83.3, 1), Measured(2, 0, 166.4, 2), Measured(2, 1, 166.2, 2),
                 Measured(1, 1, 83.2, 1)};
  result.points = SummarizePoints(result.runs, Factors(config));
  result.warnings = CheckRegime(config, result.points);
  EXPECT_TRUE(result.warnings.empty());
  const std::string table = FormatTable(config, result);
  EXPECT_NE(table.find("regime check: ok"), std::string::npos) << table;
  EXPECT_EQ(table.find(" !"), std::string::npos) << table;
  const std::string json = ToJson(config, result);
  EXPECT_NE(json.find("\"warnings\": []"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"out_of_regime\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"steps_per_sec_samples\": [83.3, 83.2]"), std::string::npos) << json;
  EXPECT_EQ(ToSvg(config, result).find("out-of-regime"), std::string::npos);
}

// Unthrottled (--upstream_ratio=0): the ideal line bends at the R measured
// with the upstream alone, not flat at 1.
TEST(EchoBenchRegimeTest, UnthrottledPlotDrawsTheIdealAtTheMeasuredRatio) {
  BenchConfig config = Config(1);
  config.upstream_ratio = 0;
  config.echo = {1, 2, 4, 6};
  BenchResult result;
  result.upstream_ratios = {4.0};
  result.runs = {Measured(1, 0, 50, 1), Measured(2, 0, 99, 2), Measured(4, 0, 190, 4),
                 Measured(6, 0, 195, 4)};
  result.points = SummarizePoints(result.runs, Factors(config));
  const std::string svg = ToSvg(config, result);
  EXPECT_NE(svg.find("R = measured 4,"), std::string::npos) << svg;
  // The dashed polyline: e = 1 at 1x, the knee at e = 4 at 4x, then flat.
  const size_t at = svg.find("stroke-dasharray=\"6,4\"/>");
  ASSERT_NE(at, std::string::npos) << svg;
  const size_t start = svg.rfind("points=\"", at) + 8;
  std::vector<double> ys;
  for (absl::string_view point :
       absl::StrSplit(svg.substr(start, svg.find('"', start) - start), ' ', absl::SkipEmpty())) {
    double y = 0;
    ASSERT_TRUE(absl::SimpleAtod(point.substr(point.find(',') + 1), &y)) << point;
    ys.push_back(y);
  }
  ASSERT_EQ(ys.size(), 3u) << svg;
  EXPECT_GT(ys[0], ys[1]);  // SVG y grows downwards: the knee is higher than e = 1
  EXPECT_EQ(ys[1], ys[2]);
}

}  // namespace
}  // namespace dataecho::bench
