// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fashion_mnist_trainer survives SIGKILL: a run with --checkpoint_dir,
// --checkpoint_every and --resume, killed at random moments (each time soon
// after a new checkpoint appears: during a step, a checkpoint write, an
// evaluation) and started again with the same command line, several times in
// one test, ends with the same data_digest, final_test_accuracy, step and
// fresh counts and accuracy curve in its --json as a run never interrupted.
// Also: --resume with an empty directory starts fresh, and a damaged newest
// checkpoint is skipped (with a warning) for the one before. Real processes,
// real files; the kill moments are drawn from a seed printed on failure.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/programs.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::CheckpointFiles;
using ::dataecho::testing::ReadFileOrDie;
using ::dataecho::testing::TempDir;
using ::dataecho::testing::WriteFileOrDie;

// Starts the trainer with `args`, its stdout and stderr appended to `log`.
pid_t Start(const std::vector<std::string>& args, const std::string& log) {
  return testing::StartProgram(TRAINER_PATH, args, log);
}

// Its exit status, or 128 + the signal that ended it.
int Wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Exits by itself (true, status in *status) or not yet.
bool Exited(pid_t pid, int* status) {
  int raw = 0;
  if (waitpid(pid, &raw, WNOHANG) != pid) return false;
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return true;
}

// What must not change across kills: the JSON's data and model fields.
struct Outcome {
  std::string digest, accuracy, steps, fresh, curve;
  bool operator==(const Outcome&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "digest " << o.digest << ", accuracy " << o.accuracy << ", steps " << o.steps
            << ", fresh " << o.fresh << ", curve [" << o.curve << "]";
}
Outcome Parse(const std::string& json) {
  auto field = [&](const char* pattern) {
    std::smatch m;
    return std::regex_search(json, m, std::regex(pattern)) ? m[1].str() : "(missing)";
  };
  return {field(R"re("data_digest": "([0-9a-f]+)")re"),
          field(R"re("final_test_accuracy": ([^,]+),)re"), field(R"re("steps_total": (\d+))re"),
          field(R"re("fresh_examples_total": (\d+))re"), field(R"re("curve": \[(.*)\])re")};
}

// Starts a checkpointed run and kills it (SIGKILL) `delay` after `dir`
// holds a checkpoint newer than its newest at the start, and at least
// `wanted_files` of them (and `min_new_steps` steps newer). False if the run
// ended first.
bool RunAndKill(const std::vector<std::string>& args, const std::string& log,
                const std::string& dir, std::chrono::microseconds delay, size_t wanted_files,
                int64_t min_new_steps = 0) {
  const std::vector<std::string> before = CheckpointFiles(dir);
  const std::string newest_before = before.empty() ? "" : before.back();
  auto step = [](const std::string& path) -> int64_t {
    std::smatch m;
    static const std::regex kStep(R"re(ckpt-0*(\d+)\.dtc$)re");
    return std::regex_search(path, m, kStep) ? std::stoll(m[1].str()) : 0;
  };
  const int64_t step_before = newest_before.empty() ? 0 : step(newest_before);
  const pid_t pid = Start(args, log);
  int status = 0;
  while (true) {
    if (Exited(pid, &status)) {
      EXPECT_EQ(status, 0) << ReadFileOrDie(log);
      return false;
    }
    const std::vector<std::string> now = CheckpointFiles(dir);
    if (!now.empty() && now.back() > newest_before && now.size() >= wanted_files &&
        step(now.back()) >= step_before + min_new_steps) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(delay);
  kill(pid, SIGKILL);
  Wait(pid);
  return true;
}

struct Config {
  const char* name;
  std::vector<std::string> flags;
};

class TrainerKillTest : public ::testing::TestWithParam<Config> {
 protected:
  std::vector<std::string> Flags(const std::string& json) const {
    std::vector<std::string> f = {
        "--train_limit=3000", "--test_limit=1000",    "--fresh_budget=4000",  "--eval_every=1500",
        "--batch_size=64",    "--shuffle_buffer=512", "--learning_rate=0.05", "--seed=3",
        "--no_progress",      "--json=" + json};
    f.insert(f.end(), GetParam().flags.begin(), GetParam().flags.end());
    return f;
  }
  std::vector<std::string> Checkpointed(const std::string& json, const std::string& dir) const {
    std::vector<std::string> f = Flags(json);
    f.insert(f.end(), {"--checkpoint_dir=" + dir, "--checkpoint_every=4", "--resume"});
    return f;
  }
  // The uninterrupted run's outcome.
  Outcome Reference(const TempDir& tmp) const {
    const std::string json = tmp.File("reference.json"), log = tmp.File("reference.log");
    const int status = Wait(Start(Flags(json), log));
    EXPECT_EQ(status, 0) << ReadFileOrDie(log);
    return Parse(ReadFileOrDie(json));
  }
};

TEST_P(TrainerKillTest, KilledAtRandomMomentsEndsAsAnUninterruptedRun) {
  TempDir tmp;
  const Outcome reference = Reference(tmp);
  ASSERT_NE(reference.digest, "(missing)");

  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(fmt::format("kill moments drawn with seed {}", seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_us(0, 10000);
  const std::string dir = tmp.File("ck"), json = tmp.File("killed.json"),
                    log = tmp.File("killed.log");
  constexpr int kKills = 4;
  int kills = 0;
  while (kills < kKills && RunAndKill(Checkpointed(json, dir), log, dir,
                                      std::chrono::microseconds(delay_us(rng)), 1)) {
    ++kills;
  }
  // (On a fast machine the run may end before the last kill: at least two.)
  EXPECT_GE(kills, 2) << "the run ended before it was killed twice";
  // The last start runs to the end.
  const std::string last_log = tmp.File("last.log");
  ASSERT_EQ(Wait(Start(Checkpointed(json, dir), last_log)), 0) << ReadFileOrDie(last_log);
  EXPECT_NE(ReadFileOrDie(last_log).find("resumed from " + dir), std::string::npos)
      << ReadFileOrDie(last_log);
  EXPECT_EQ(Parse(ReadFileOrDie(json)), reference) << ReadFileOrDie(log);
  EXPECT_LE(CheckpointFiles(dir).size(), 2u);
}

// --insert=auto and --insert=adaptive decide from timing, which is not
// state: a resumed run replays the decisions its checkpoint's pipeline state
// carries (auto: the placed echoes' factor changes; adaptive: the adaptive
// echo's journal of fresh/repeat decisions), then decides afresh, so its
// data_digest is not an uninterrupted run's. What holds across the kills:
// every example trained fresh exactly once (the dumped indices; the budget
// is below one epoch), as many as the JSON counts, and the resumed run
// completes.
void KillAndCheckEveryExampleFreshOnce(const std::vector<std::string>& echo_args) {
  TempDir tmp;
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(fmt::format("kill moments drawn with seed {}", seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_us(0, 10000);
  const std::string dir = tmp.File("ck"), json = tmp.File("run.json"), log = tmp.File("run.log"),
                    dump = tmp.File("fresh.txt");
  constexpr int kExamples = 20000;
  std::vector<std::string> args = {"--train_limit=" + std::to_string(kExamples),
                                   "--test_limit=1000",
                                   "--fresh_budget=10000",
                                   "--eval_every=5000",
                                   "--batch_size=64",
                                   "--shuffle_buffer=512",
                                   "--learning_rate=0.05",
                                   "--seed=3",
                                   "--no_progress",
                                   "--json=" + json,
                                   "--dump_fresh_indices=" + dump,
                                   "--checkpoint_dir=" + dir,
                                   "--checkpoint_every=4",
                                   "--resume"};
  args.insert(args.end(), echo_args.begin(), echo_args.end());
  // Each run is killed after at least 60 more steps: past an auto planner's
  // first decisions (after 3 x 16 batches), so that the kills land while
  // batches made with the decided factors are in flight.
  constexpr int kKills = 2;
  int kills = 0;
  while (kills < kKills &&
         RunAndKill(args, log, dir, std::chrono::microseconds(delay_us(rng)), 1, 60)) {
    ++kills;
  }
  EXPECT_GE(kills, 2) << "the run ended before it was killed twice";
  const std::string last_log = tmp.File("last.log");
  ASSERT_EQ(Wait(Start(args, last_log)), 0) << ReadFileOrDie(last_log);
  EXPECT_NE(ReadFileOrDie(last_log).find("resumed from " + dir), std::string::npos)
      << ReadFileOrDie(last_log);
  const Outcome outcome = Parse(ReadFileOrDie(json));
  std::vector<int> seen(kExamples, 0);
  int64_t rows = 0;
  std::istringstream lines(ReadFileOrDie(dump));
  for (int64_t index = 0; lines >> index; ++rows) {
    ASSERT_TRUE(index >= 0 && index < kExamples) << index;
    EXPECT_EQ(++seen[static_cast<size_t>(index)], 1) << "example " << index << " fresh twice";
  }
  EXPECT_EQ(std::to_string(rows), outcome.fresh) << ReadFileOrDie(log);
  EXPECT_GE(rows, 10000);
}

TEST(TrainerKillAutoTest, KilledAtRandomMomentsTrainsEveryExampleFreshOnce) {
  // The augmentation is the bottleneck: auto echoes (after it).
  KillAndCheckEveryExampleFreshOnce({"--insert=auto", "--max_echo=3", "--augment_cpu_ms=0.2"});
}

TEST(TrainerKillAdaptiveTest, KilledAtRandomMomentsTrainsEveryExampleFreshOnce) {
  // The trainer's checkpoints and its adaptive placement's state (the
  // planner's journal section) across kills. Decoding IDX files keeps up
  // here, so its decisions are mostly fresh: the replay of repeats is
  // checked in checkpoint_auto_placement_test.cc, behind a slow upstream.
  KillAndCheckEveryExampleFreshOnce({"--insert=adaptive", "--max_echo=3"});
}

TEST_P(TrainerKillTest, ResumeWithAnEmptyDirectoryStartsFresh) {
  TempDir tmp;
  const Outcome reference = Reference(tmp);
  const std::string dir = tmp.File("empty"), json = tmp.File("fresh.json"),
                    log = tmp.File("fresh.log");
  std::filesystem::create_directory(dir);
  ASSERT_EQ(Wait(Start(Checkpointed(json, dir), log)), 0) << ReadFileOrDie(log);
  EXPECT_EQ(ReadFileOrDie(log).find("resumed from"), std::string::npos) << ReadFileOrDie(log);
  EXPECT_EQ(Parse(ReadFileOrDie(json)), reference);
  EXPECT_EQ(CheckpointFiles(dir).size(), 2u);  // it wrote checkpoints, the last two kept
}

TEST_P(TrainerKillTest, DamagedNewestCheckpointFallsBackToThePreviousOne) {
  TempDir tmp;
  const Outcome reference = Reference(tmp);
  const std::string dir = tmp.File("ck"), json = tmp.File("out.json"), log = tmp.File("out.log");
  ASSERT_TRUE(RunAndKill(Checkpointed(json, dir), log, dir, std::chrono::microseconds(0), 2))
      << "the run ended before two checkpoints were written";
  const std::vector<std::string> files = CheckpointFiles(dir);
  ASSERT_EQ(files.size(), 2u);
  std::string bytes = ReadFileOrDie(files[1]);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
  WriteFileOrDie(files[1], bytes);
  const std::string resumed_log = tmp.File("resumed.log");
  ASSERT_EQ(Wait(Start(Checkpointed(json, dir), resumed_log)), 0) << ReadFileOrDie(resumed_log);
  const std::string out = ReadFileOrDie(resumed_log);
  EXPECT_NE(out.find("warning: checkpoint " + files[1] + ": CRC-32C"), std::string::npos) << out;
  EXPECT_NE(out.find("resumed from " + files[0]), std::string::npos) << out;
  EXPECT_EQ(Parse(ReadFileOrDie(json)), reference);
}

INSTANTIATE_TEST_SUITE_P(
    Placements, TrainerKillTest,
    ::testing::Values(Config{"echo2_before_augment", {"--echo=2", "--insert=before_augment"}},
                      Config{"echo1_5_batch", {"--echo=1.5", "--insert=batch"}}),
    [](const ::testing::TestParamInfo<Config>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dataecho
