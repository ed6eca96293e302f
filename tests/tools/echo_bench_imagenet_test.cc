// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench --dataset=imagenet through the real executable, on a handful of
// ImageNet-like JPEGs: the decode-bound source, unthrottled, with the step
// chosen for a target R, and the ideal taken from the measured R.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "config.h"
#include "gtest/gtest.h"
#include "support/programs.h"
#include "testing/cpus.h"
#include "testing/imagenet_like.h"

namespace dataecho::bench {
namespace {

testing::ProgramRun RunBench(const std::string& args) {
  return testing::RunShell(std::string(ECHO_BENCH_PATH) + " " + args);
}

// echo_bench --dataset=imagenet with `args` on 6 ImageNet-like images in one
// shard under TempDir()/`name`, 4 rows a batch, one repeat: the run, and the
// JSON it wrote (empty if none).
struct SmallRun {
  testing::ProgramRun run;
  std::string json;
};
SmallRun RunOnSmallSet(const std::string& name, const std::string& args) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  absl::StatusOr<std::vector<std::string>> shards =
      testing::WriteImagenetLike(dir, {.images = 6, .shards = 1, .seed = 3});
  EXPECT_TRUE(shards.ok()) << shards.status();
  if (!shards.ok()) return {};
  const std::string json = dir + "/out.json";
  SmallRun out;
  out.run = RunBench("--no_progress --dataset=imagenet --source=" + (*shards)[0] +
                     " --repeats=1 --batch_size=4 --shuffle_buffer=8 --json=" + json + " " + args);
  std::ifstream f(json);
  std::stringstream ss;
  ss << f.rdbuf();
  out.json = ss.str();
  return out;
}

TEST(EchoBenchImagenetTest, FlagsAreChecked) {
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--dataset=cifar", "must be fashion_mnist or imagenet"},
           {"--dataset=imagenet --format=idx", "reads tfrecord image records"},
           {"--target_ratio=4", "needs --upstream_ratio=0"},
           {"--upstream_ratio=0 --target_ratio=-1", "must be >= 0"},
           {"--pipeline_threads=-1", "must be in [0, 64]"},
           {"--cpus=-1", "must be >= 0"},
           {"--cpus=100000", "--cpus=100000: 100000 CPUs: this process may run on"}}) {
    const testing::ProgramRun r = RunBench(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  }
  const std::string usage = Usage();
  EXPECT_NE(usage.find("--dataset=NAME"), std::string::npos) << usage;
  EXPECT_NE(usage.find("[fashion_mnist]"), std::string::npos) << usage;
  EXPECT_NE(usage.find("--target_ratio=R"), std::string::npos) << usage;
}

TEST(EchoBenchImagenetTest, DecodeBoundRunReportsTheMeasuredRatio) {
  const SmallRun s = RunOnSmallSet("echo_bench_imagenet",
                                   "--upstream_ratio=0 --target_ratio=2 --echo=2 --steps=4");
  const testing::ProgramRun& r = s.run;
  const std::string& j = s.json;
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("(target R = 2)"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(j, m, std::regex("\"measured_upstream_ratio\": ([0-9.e+-]+)")))
      << j;
  const double measured = std::stod(m[1]);
  EXPECT_GT(measured, 0);
  EXPECT_NE(j.find("\"upstream_ratio\": 0,"), std::string::npos) << j;
  // The e = 2 run's ideal is min(2, measured R), at least 1; e = 1's is 1.
  // One repeat: the run's R is the reported one (else it is their median).
  ASSERT_TRUE(
      std::regex_search(j, m, std::regex("\"echo\": 2,[^}]*\"ideal_speedup\": ([0-9.e+-]+)")))
      << j;
  EXPECT_NEAR(std::stod(m[1]), std::max(1.0, std::min(2.0, measured)), 1e-6 * measured) << j;
  // 4 steps x 4 rows of 224x224 FP16 images, half of them repeats at e = 2.
  EXPECT_NE(j.find("\"fresh_examples\": 16, \"repeated_examples\": 0"), std::string::npos) << j;
}

TEST(EchoBenchImagenetTest, PipelineThreadsRunTheDecodeAndTheAugmentationOnThatMany) {
  const SmallRun s = RunOnSmallSet("echo_bench_imagenet_threads",
                                   "--stats --upstream_ratio=0 --echo=1 --steps=4 --no_pin "
                                   "--pipeline_threads=2");
  const testing::ProgramRun& r = s.run;
  const std::string& j = s.json;
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The stage table: the decode Map and the augmentation Map on 2 threads each.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\ndecode +2 "))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nmap +2 "))) << r.out;
  EXPECT_NE(j.find("\"pipeline_threads\": 2,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"fresh_examples\": 16, \"repeated_examples\": 0"), std::string::npos) << j;
}

TEST(EchoBenchImagenetTest, CpusRestrictsTheRunToThatMany) {
  // The default: every CPU this test may use.
  const std::string all = "\"cpus\": " + std::to_string(testing::UsableCpus()) + ",";
  const SmallRun d = RunOnSmallSet("echo_bench_imagenet_all_cpus",
                                   "--upstream_ratio=0 --echo=1 --steps=2 --no_pin");
  ASSERT_EQ(d.run.exit_code, 0) << d.run.out;
  EXPECT_NE(d.json.find(all), std::string::npos) << d.json;
  // One CPU: the whole process (its threads inherit the affinity) runs there.
  const SmallRun one = RunOnSmallSet("echo_bench_imagenet_one_cpu",
                                     "--upstream_ratio=0 --echo=1 --steps=2 --no_pin --cpus=1");
  ASSERT_EQ(one.run.exit_code, 0) << one.run.out;
  EXPECT_NE(one.run.out.find("\ncpus: 1\n"), std::string::npos) << one.run.out;
  EXPECT_NE(one.json.find("\"cpus\": 1,"), std::string::npos) << one.json;
}

}  // namespace
}  // namespace dataecho::bench
