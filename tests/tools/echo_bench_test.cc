// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench: argument validation, the JSON schema and a short run on a tiny
// generated dataset, through the real executable.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/programs.h"
#include "testing/http_server.h"

namespace dataecho::bench {
namespace {

// (repeat, echo) of each entry of the JSON's "run_log", in order.
std::vector<std::pair<int, double>> RunLogOrder(const std::string& json) {
  std::vector<std::pair<int, double>> order;
  const std::string log = json.substr(std::min(json.find("\"run_log\""), json.size()));
  static const std::regex kEntry(R"re(\{"repeat": (\d+), "echo": ([0-9.]+),)re");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kEntry); it != std::sregex_iterator();
       ++it) {
    order.emplace_back(std::stoi((*it)[1]), std::stod((*it)[2]));
  }
  return order;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

testing::ProgramRun RunBench(const std::string& args) {
  return testing::RunShell(std::string(ECHO_BENCH_PATH) + " " + args);
}

TEST(EchoBenchArgsTest, RejectsBadInput) {
  const testing::UsageCase cases[] = {
      {"--echo=0.5", "below 1"},
      {"--echo=2,x", "'x' is not a number"},
      {"--insert=sideways", "must be before_augment, after_augment, batch, adaptive or auto"},
      {"--batch_size=0", "must be >= 1"},
      {"--step_ms=-1", "must be > 0"},
      {"--frobnicate=1", "unknown flag --frobnicate"},
      {"stray", "unexpected argument 'stray'"},
      {"--repeats=0", "--repeats=0: must be in [1, 1000]"},
      {"--max_efficiency=0", "--max_efficiency=0: must be > 0"},
      {"--baseline_tolerance=-0.1", "--baseline_tolerance=-0.1: must be >= 0"},
      {"--max_spread=-1", "--max_spread=-1: must be >= 0"},
      {"--max_trainer_lost=-1", "--max_trainer_lost=-1: must be >= 0"},
  };
  for (const testing::UsageCase& c : cases)
    EXPECT_TRUE(testing::IsUsageError(RunBench(c.args), c.message)) << c.args;
}

TEST(EchoBenchArgsTest, UnreachableSourceFailsClearly) {
  testing::ProgramRun r = RunBench("--no_progress --source=/nonexistent/dir/train-*.tfrecord");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("/nonexistent/dir"), std::string::npos) << r.out;
  testing::ProgramRun http = RunBench("--no_progress --source=http://127.0.0.1:1/x.tfrecord");
  EXPECT_NE(http.exit_code, 0);
  EXPECT_NE(http.out.find("127.0.0.1:1/x.tfrecord"), std::string::npos) << http.out;
}

TEST(EchoBenchArgsTest, HelpExitsZero) {
  testing::ProgramRun r = RunBench("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--upstream_ratio=R"), std::string::npos);
}

TEST(EchoBenchArgsTest, ParsesFactorList) {
  const char* argv[] = {"echo_bench", "--echo=1.5,3", "--insert=batch", "--steps=7"};
  absl::StatusOr<BenchConfig> c = ParseArgs(4, const_cast<char**>(argv));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->echo, (std::vector<double>{1.5, 3}));
  EXPECT_EQ(c->insert, Insert::kBatch);
  EXPECT_EQ(c->steps, 7);
}

// Every call starts from the defaults (flags are process-wide); the defaults
// are BenchConfig's.
TEST(EchoBenchArgsTest, EachParseStartsFromTheDefaults) {
  const char* first[] = {"echo_bench", "--echo=5", "--steps=9",
                         "--no_pin",   "--stats",  "--json=out.json"};
  ASSERT_TRUE(ParseArgs(6, const_cast<char**>(first)).ok());
  const char* second[] = {"echo_bench"};
  absl::StatusOr<BenchConfig> c = ParseArgs(1, const_cast<char**>(second));
  ASSERT_TRUE(c.ok()) << c.status();
  const BenchConfig defaults;
  EXPECT_EQ(c->echo, defaults.echo);
  EXPECT_EQ(c->steps, defaults.steps);
  EXPECT_EQ(c->pin_trainer, defaults.pin_trainer);
  EXPECT_EQ(c->stats, defaults.stats);
  EXPECT_EQ(c->json, defaults.json);
  EXPECT_EQ(c->insert, defaults.insert);
  EXPECT_EQ(c->max_echo, defaults.max_echo);
  EXPECT_EQ(c->upstream_ratio, defaults.upstream_ratio);
  EXPECT_EQ(c->step_ms, defaults.step_ms);
  EXPECT_EQ(c->batch_size, defaults.batch_size);
  EXPECT_EQ(c->shuffle_buffer, defaults.shuffle_buffer);
  EXPECT_EQ(c->seed, defaults.seed);
  EXPECT_EQ(c->latency_ms, defaults.latency_ms);
  EXPECT_EQ(c->progress, defaults.progress);
  EXPECT_EQ(c->format, defaults.format);
  EXPECT_EQ(c->repeats, 3);
  EXPECT_EQ(c->baseline_tolerance, 0.05);
  EXPECT_EQ(c->max_efficiency, 1.03);
  EXPECT_EQ(c->max_spread, 0.10);
  EXPECT_EQ(c->max_trainer_lost, 0.05);
  EXPECT_FALSE(c->strict);
}

TEST(EchoBenchArgsTest, AdaptiveRunsOnlyTheBaselineUnlessEchoIsGiven) {
  const char* adaptive[] = {"echo_bench", "--insert=adaptive"};
  absl::StatusOr<BenchConfig> c = ParseArgs(2, const_cast<char**>(adaptive));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->echo, (std::vector<double>{1}));
  const char* given[] = {"echo_bench", "--insert=adaptive", "--echo=1,2,3,4,6,8"};
  c = ParseArgs(3, const_cast<char**>(given));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->echo, (std::vector<double>{1, 2, 3, 4, 6, 8}));
}

TEST(EchoBenchArgsTest, AutoAndGrid) {
  const char* auto_args[] = {"echo_bench", "--insert=auto", "--prefer=speed"};
  absl::StatusOr<BenchConfig> c = ParseArgs(3, const_cast<char**>(auto_args));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->insert, Insert::kAuto);
  EXPECT_EQ(c->prefer, EchoPrefer::kSpeed);
  EXPECT_EQ(c->echo, (std::vector<double>{1}));  // the baseline, then --max_echo
  const char* grid[] = {"echo_bench", "--grid"};
  c = ParseArgs(2, const_cast<char**>(grid));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->grid);
  EXPECT_EQ(c->prefer, EchoPrefer::kProgress);
  EXPECT_EQ(c->echo, (std::vector<double>{2, 3, 4}));
  const char* grid_insert[] = {"echo_bench", "--grid", "--insert=batch"};
  EXPECT_EQ(ParseArgs(3, const_cast<char**>(grid_insert)).status().code(),
            absl::StatusCode::kInvalidArgument);
  const char* bad_prefer[] = {"echo_bench", "--prefer=fastest"};
  c = ParseArgs(2, const_cast<char**>(bad_prefer));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("--prefer=fastest"), std::string::npos) << c.status();
}

TEST(EchoBenchArgsTest, HelpListsEveryFlagWithItsDefault) {
  const std::string usage = Usage();
  for (const char* flag : {"--source=URI",
                           "--format=FORMAT",
                           "--data_dir=DIR",
                           "--latency_ms=MS",
                           "--echo=E1,E2,...",
                           "--insert=WHERE",
                           "--max_echo=M",
                           "--batch_size=N",
                           "--shuffle_buffer=N",
                           "--seed=N",
                           "--step_ms=T",
                           "--no_pin",
                           "--upstream_ratio=R",
                           "--steps=N",
                           "--json=PATH",
                           "--plot=PATH",
                           "--stats",
                           "--no_progress",
                           "--repeats=N",
                           "--baseline_tolerance=F",
                           "--max_efficiency=F",
                           "--max_spread=F",
                           "--max_trainer_lost=F",
                           "--strict",
                           "--help",
                           "Exit status: 0 success; 1 a run failed",
                           "3 with --strict"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag << "\n" << usage;
  }
  for (const char* shown :
       {"[tfrecord]", "[5]", "[1,2,3,4,6,8]", "[before_augment]", "[128]", "[2048]", "[300]",
        "unthrottled [6]", "[3]", "[0.05]", "[1.03]", "[0.1]"}) {
    EXPECT_NE(usage.find(shown), std::string::npos) << shown << "\n" << usage;
  }
  EXPECT_EQ(RunBench("--help").out, usage);
}

// Writes `n` 28x28 image records to one TFRecord file.
std::string WriteTinyDataset(const std::string& dir, int n) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tiny.tfrecord";
  auto w = TFRecordWriter::Create(path);
  EXPECT_TRUE(w.ok());
  for (int i = 0; i < n; ++i) {
    Example e = testing::MakeExample(static_cast<uint64_t>(i), 28 * 28);
    Tensor image = *Tensor::Make(DType::kUInt8, {28, 28, 1}, e.components[0].buffer());
    EXPECT_TRUE((*w)->Write(*EncodeImageRecord(image, i % 10)).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

TEST(EchoBenchRunTest, ShortRunWritesJsonAndPlot) {
  const std::string dir = ::testing::TempDir() + "/echo_bench_run";
  const std::string data = WriteTinyDataset(dir, 200);
  const std::string json = dir + "/out.json", svg = dir + "/out.svg";
  testing::ProgramRun r = RunBench("--no_progress --source=" + data +
                                   " --echo=2,4 --steps=20 --batch_size=16 --shuffle_buffer=64 "
                                   "--step_ms=0.5 --upstream_ratio=3 --json=" +
                                   json + " --plot=" + svg);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("effic."), std::string::npos) << r.out;  // the table
  std::ifstream f(json);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string j = ss.str();
  for (const char* key :
       {"\"upstream_ratio\": 3", "\"step_ms\": 0.5", "\"runs\": [", "\"echo\": 1,", "\"echo\": 2,",
        "\"echo\": 4,", "\"insert\": \"before_augment\"", "\"steps\": 20",
        "\"steps_per_sec\": ", "\"speedup\": 1,", "\"ideal_speedup\": 3",
        "\"efficiency\": ", "\"fresh_examples\": ", "\"repeated_examples\": 0,",
        "\"realized_echo_factor\": 1,", "\"upstream_bytes\": ", "\"consumer_idle_fraction\": "}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  }
  // Each run's rows are 20 steps x 16 rows: fresh + repeats.
  EXPECT_NE(j.find("\"fresh_examples\": 320, \"repeated_examples\": 0"), std::string::npos) << j;
  // Three repeats by default: medians with their spread, the regime check,
  // and every run in the order it ran, the order rotating per repeat.
  for (const char* key :
       {"\"repeats\": 3,", "\"measured_upstream_ratio\": ", "\"measured_upstream_ratio_min\": ",
        "\"measured_upstream_ratio_max\": ", "\"nominal_steps_per_sec\": 666.667",
        "\"baseline_tolerance\": 0.05", "\"max_efficiency\": 1.03", "\"max_spread\": 0.1",
        "\"max_trainer_lost\": 0.05", "\"trainer_lost_fraction\": ", "\"warnings\": [",
        "\"steps_per_sec_samples\": [",
        "\"steps_per_sec_min\": ", "\"steps_per_sec_max\": ", "\"steps_per_sec_spread\": ",
        "\"efficiency_min\": ", "\"efficiency_max\": ", "\"out_of_regime\": ", "\"run_log\": ["}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  }
  EXPECT_EQ(RunLogOrder(j),
            (std::vector<std::pair<int, double>>{
                {1, 1}, {1, 2}, {1, 4}, {2, 2}, {2, 4}, {2, 1}, {3, 4}, {3, 1}, {3, 2}}))
      << j;
  // One row per run, printed before the table of medians.
  const size_t table = r.out.find("effic. range");
  ASSERT_NE(table, std::string::npos) << r.out;
  for (int i = 1; i <= 9; ++i) {
    const size_t row = r.out.find(fmt::format("\n{:>7} ", fmt::format("{}/9", i)));
    EXPECT_LT(row, table) << i << "\n" << r.out;
  }
  std::ifstream s(svg);
  std::stringstream svg_text;
  svg_text << s.rdbuf();
  EXPECT_NE(svg_text.str().find("<svg"), std::string::npos);
  EXPECT_NE(svg_text.str().find("ideal min(e, R)"), std::string::npos);
}

TEST(EchoBenchRunTest, AdaptiveRunsTheBaselineThenTheCap) {
  const std::string dir = ::testing::TempDir() + "/echo_bench_adaptive";
  const std::string data = WriteTinyDataset(dir, 200);
  const std::string json = dir + "/out.json";
  testing::ProgramRun r = RunBench("--no_progress --source=" + data +
                                   " --insert=adaptive --max_echo=3 --steps=20 --batch_size=16 "
                                   "--shuffle_buffer=64 --step_ms=0.5 --upstream_ratio=3 --json=" +
                                   json);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream f(json);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string j = ss.str();
  for (const char* key :
       {"\"echo\": 1,", "\"echo\": 3,", "\"insert\": \"adaptive\"",
        "\"realized_echo_factor\": ", "\"rate_ratio_estimate\": ", "\"ideal_speedup\": 3"}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  }
  // The baseline (m = 1) never repeats.
  EXPECT_NE(j.find("\"fresh_examples\": 320, \"repeated_examples\": 0"), std::string::npos) << j;
  EXPECT_EQ(j.find("\"echo\": 4,"), std::string::npos) << j;  // only e = 1 and m = 3
}

TEST(EchoBenchRunTest, GridRunsEveryPlacementAndAuto) {
  const std::string dir = ::testing::TempDir() + "/echo_bench_grid";
  const std::string data = WriteTinyDataset(dir, 200);
  const std::string json = dir + "/out.json";
  testing::ProgramRun r =
      RunBench("--no_progress --source=" + data +
               " --grid --echo=2 --max_echo=3 --repeats=1 --steps=40 --batch_size=16 "
               "--shuffle_buffer=64 --step_ms=0.5 --upstream_ratio=3 --json=" +
               json);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("grid: auto "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" / best fixed "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decisions of its median run"), std::string::npos) << r.out;
  const std::string j = ReadFile(json);
  for (const char* key :
       {"\"auto_vs_best_fixed\": ", "\"best_fixed\": {\"insert\": ", "\"grid\": [",
        "\"insert\": \"before_augment\", \"echo\": 2", "\"insert\": \"after_augment\", \"echo\": 2",
        "\"insert\": \"batch\", \"echo\": 2", "\"insert\": \"auto\", \"echo\": 3",
        "\"decisions\": [\"after ", "\"auto_insert\": "}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  }
  // The baseline, three fixed placements at e = 2, auto: five runs.
  EXPECT_EQ(RunLogOrder(j).size(), 5u) << j;
}

// --strict turns a regime warning into exit status 3, the results still
// printed and written. The warning is forced without relying on timing: the
// baseline's efficiency is 1 by definition, above --max_efficiency=0.5.
TEST(EchoBenchRunTest, StrictExitsThreeOnARegimeWarning) {
  const std::string dir = ::testing::TempDir() + "/echo_bench_strict";
  const std::string data = WriteTinyDataset(dir, 200);
  const std::string json = dir + "/out.json", svg = dir + "/out.svg";
  const std::string common = "--no_progress --source=" + data +
                             " --echo=2 --steps=10 --batch_size=16 --shuffle_buffer=64 "
                             "--step_ms=0.5 --upstream_ratio=0 --repeats=1 --json=" +
                             json + " --plot=" + svg;
  testing::ProgramRun strict = RunBench(common + " --strict --max_efficiency=0.5");
  EXPECT_EQ(strict.exit_code, kExitOutOfRegime) << strict.out;
  EXPECT_NE(strict.out.find("warning: e=1: efficiency 1.000 is above 0.5"), std::string::npos)
      << strict.out;
  EXPECT_NE(strict.out.find("--strict: "), std::string::npos) << strict.out;
  const std::string j = ReadFile(json);
  EXPECT_NE(j.find("\"warnings\": [\"e=1: efficiency 1.000 is above 0.5"), std::string::npos) << j;
  EXPECT_NE(j.find("\"out_of_regime\": true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"nominal_steps_per_sec\": null"), std::string::npos) << j;
  EXPECT_NE(ReadFile(svg).find("class=\"out-of-regime\""), std::string::npos);

  // The same warning without --strict: reported, exit status 0.
  testing::ProgramRun lenient = RunBench(common + " --max_efficiency=0.5");
  EXPECT_EQ(lenient.exit_code, 0) << lenient.out;
  EXPECT_NE(lenient.out.find("warning: e=1: efficiency 1.000"), std::string::npos) << lenient.out;

  // No warning: unthrottled (no nominal baseline), one repeat (no spread),
  // bounds no run reaches: 0.
  testing::ProgramRun clean =
      RunBench(common + " --strict --max_efficiency=1000 --max_trainer_lost=1");
  EXPECT_EQ(clean.exit_code, 0) << clean.out;
  EXPECT_NE(clean.out.find("regime check: ok"), std::string::npos) << clean.out;
  EXPECT_NE(ReadFile(json).find("\"warnings\": []"), std::string::npos);
}

// Each run's row is out as soon as the run ends: here a later run fails (the
// server answers 404 once the first runs have read their data), and the rows
// of the runs before it are in the output, ahead of the error.
TEST(EchoBenchRunTest, RowsArePrintedAsRunsFinish) {
  const std::string dir = ::testing::TempDir() + "/echo_bench_rows";
  WriteTinyDataset(dir, 200);
  auto server = testing::HttpServer::Start({.directory = dir});
  ASSERT_TRUE(server.ok()) << server.status();
  // The upstream measurement and the first run read the 200 records about 11
  // times (one GET each; bounded by the steps and the pipeline's queues, not
  // by timing), the three runs of one repeat about 25 times, the whole bench
  // about 75. From the 19th GET on, every read is a 404: a later run fails.
  (*server)->AddFault({.kind = testing::HttpFault::Kind::kStatus,
                       .method = "GET",
                       .path_substring = "tiny",
                       .status = 404,
                       .skip = 18,
                       .times = -1});
  testing::ProgramRun r = RunBench("--no_progress --source=" + (*server)->url() +
                                   "/tiny.tfrecord --echo=2,4 --steps=60 --batch_size=16 "
                                   "--shuffle_buffer=64 --step_ms=0.5 --upstream_ratio=3");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const size_t error = r.out.find("echo_bench: NOT_FOUND");
  ASSERT_NE(error, std::string::npos) << r.out;
  const size_t first = r.out.find(fmt::format("\n{:>7} {:>6} {:>5.2f} ", "1/9", 1, 1.0));
  EXPECT_LT(first, error) << r.out;
  EXPECT_EQ(r.out.find("effic. range"), std::string::npos) << r.out;  // no table
}

}  // namespace
}  // namespace dataecho::bench
