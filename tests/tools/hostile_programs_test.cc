// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Hostile command lines for echo_bench, the example trainer and the small
// examples, through the built programs: numbers that parse but mean nothing
// and unknown flags are usage errors (exit status 2) found before any work,
// output paths are checked before the run, a dataset without records fails
// with FAILED_PRECONDITION "no records in ..." instead of spinning, user-chosen
// text is printed escaped, and --help lists the program's flags.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "dataecho/formats/tfrecord.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/programs.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ProgramRun;
using ::dataecho::testing::RunShell;
using ::dataecho::testing::TempDir;

ProgramRun Shell(const std::string& cmd) { return RunShell(cmd); }

ProgramRun Program(const char* path, const std::string& args) {
  return Shell(fmt::format("'{}' {}", path, args));
}

// A TFRecord file without records, and IDX files with `rows` 28x28 rows.
void WriteEmptyData(const TempDir& dir, uint32_t rows) {
  testing::WriteFileOrDie(dir.File("empty.tfrecord"), "");
  std::string images("\0\0\x08\x03", 4), labels("\0\0\x08\x01", 4);
  for (uint32_t d : {rows, 28u, 28u}) {
    for (int s = 24; s >= 0; s -= 8) images += static_cast<char>((d >> s) & 0xff);
  }
  for (int s = 24; s >= 0; s -= 8) labels += static_cast<char>((rows >> s) & 0xff);
  images += std::string(size_t{rows} * 784, '\x7f');
  labels += std::string(rows, '\x03');
  for (const char* set : {"train", "t10k"}) {
    testing::WriteFileOrDie(dir.File(fmt::format("{}-images-idx3-ubyte.gz", set)),
                            testing::Gzip(images));
    testing::WriteFileOrDie(dir.File(fmt::format("{}-labels-idx1-ubyte.gz", set)),
                            testing::Gzip(labels));
  }
}

#ifdef ECHO_BENCH_PATH
// Each is a usage error, found before the source is opened (the source named
// here does not exist: reaching it would exit 1).
TEST(EchoBenchHostileTest, MeaninglessNumbersAreUsageErrors) {
  const testing::UsageCase cases[] = {
      {"--step_ms=1e308", "--step_ms=1e+308: must be at most 60000"},
      {"--latency_ms=1e308", "--latency_ms=1e+308: must be at most 60000"},
      {"--upstream_ratio=1e300", "the e=1 run alone would take"},
      {"--steps=100000000000", "the e=1 run alone would take"},
      {"--batch_size=100000000000", "--batch_size=100000000000: must be at most 2147483647"},
      {"--shuffle_buffer=99999999999999",
       "shuffle: --shuffle_buffer = 99999999999999 needs at least"},
      {"--echo=1e300", "echo factors must be <= 1e6"},
      {"--max_echo=1e300", "--max_echo=1e+300: must be <= 1e6"},
      {"--source=", "--source=: is empty"},
      {"--json=", "--json=: is empty"},
      {"--step_ms=nan", "not a finite number"},
  };
  for (const testing::UsageCase& c : cases) {
    EXPECT_TRUE(testing::IsUsageError(
        Program(ECHO_BENCH_PATH,
                fmt::format("--no_progress --source=/nonexistent/x.tfrecord {}", c.args)),
        c.message))
        << c.args;
  }
}

TEST(EchoBenchHostileTest, OutputPathsAreCheckedBeforeTheRun) {
  TempDir dir;
  for (const char* flag : {"json", "plot"}) {
    ProgramRun r = Program(
        ECHO_BENCH_PATH, fmt::format("--no_progress --source=/nonexistent/x.tfrecord --{}={}", flag,
                                     dir.File("no/such/dir/out")));
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(
        r.out.find(fmt::format("--{}={}: cannot write it", flag, dir.File("no/such/dir/out"))),
        std::string::npos)
        << r.out;
  }
  // A run that fails after the files were created leaves none behind.
  ProgramRun r =
      Program(ECHO_BENCH_PATH,
              fmt::format("--no_progress --source=/nonexistent/x.tfrecord --json={} --plot={}",
                          dir.File("out.json"), dir.File("out.svg")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.svg")));
}

TEST(EchoBenchHostileTest, EmptySourceFailsInsteadOfSpinning) {
  TempDir dir;
  WriteEmptyData(dir, 0);
  ProgramRun r =
      Program(ECHO_BENCH_PATH, "--no_progress --steps=5 --source=" + dir.File("empty.tfrecord"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAILED_PRECONDITION: no records in " + dir.File("empty.tfrecord")),
            std::string::npos)
      << r.out;
  ProgramRun idx =
      Program(ECHO_BENCH_PATH, fmt::format("--no_progress --steps=5 --format=idx --source={},{}",
                                           dir.File("train-images-idx3-ubyte.gz"),
                                           dir.File("train-labels-idx1-ubyte.gz")));
  EXPECT_EQ(idx.exit_code, 1) << idx.out;
  EXPECT_NE(idx.out.find("FAILED_PRECONDITION: no records in"), std::string::npos) << idx.out;
  // Over HTTP with credentials in the URL: named, but redacted.
  auto server = testing::HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string url = (*server)->url();
  ProgramRun web =
      Program(ECHO_BENCH_PATH,
              fmt::format("--no_progress --steps=5 --source=http://alice:SECRET@{}/empty.tfrecord",
                          url.substr(url.find("://") + 3)));
  EXPECT_EQ(web.exit_code, 1) << web.out;
  EXPECT_NE(web.out.find("no records in http://127.0.0.1"), std::string::npos) << web.out;
  EXPECT_EQ(web.out.find("SECRET"), std::string::npos) << web.out;
}
#endif  // ECHO_BENCH_PATH

#ifdef TRAINER_PATH
TEST(TrainerHostileTest, MeaninglessNumbersAreUsageErrors) {
  TempDir dir;
  WriteEmptyData(dir, 64);
  const std::string base = fmt::format(
      "--no_progress --idx_dir={} --fresh_budget=128 --eval_every=128 --batch_size=32", dir.path());
  for (const char* args :
       {"--learning_rate=inf", "--learning_rate=nan", "--learning_rate=0", "--learning_rate=-1",
        "--learning_rate=1e39", "--target_accuracy=5", "--target_accuracy=0",
        "--target_accuracy=-0.5", "--step_ms=1e308", "--echo=1e300", "--momentum=1",
        "--upstream_ratio=inf", "--checkpoint_every=-1", "--checkpoint_every=5", "--prefer=fast"}) {
    ProgramRun r = Program(TRAINER_PATH, base + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    // The message names the option (step_ms as step_seconds).
    EXPECT_NE(r.out.find(std::string(args).substr(2, 4)), std::string::npos) << args << "\n"
                                                                             << r.out;
  }
  ProgramRun json = Program(TRAINER_PATH, base + " --json=" + dir.File("no/dir/r.json"));
  EXPECT_EQ(json.exit_code, 2) << json.out;
  EXPECT_NE(json.out.find("cannot write it"), std::string::npos) << json.out;
  ProgramRun stray = Program(TRAINER_PATH, base + " stray");
  EXPECT_EQ(stray.exit_code, 2) << stray.out;
  // --resume without a directory; checkpoints of a pipeline read over the
  // loopback server, whose port changes from run to run.
  ProgramRun resume = Program(TRAINER_PATH, base + " --resume");
  EXPECT_EQ(resume.exit_code, 2) << resume.out;
  EXPECT_NE(resume.out.find("checkpoint_dir"), std::string::npos) << resume.out;
  ProgramRun http = Program(
      TRAINER_PATH, base + fmt::format(" --train_shards={} --upstream_ratio=2 --checkpoint_dir={} "
                                       "--checkpoint_every=5",
                                       dir.File("*.tfrecord"), dir.File("ck")));
  EXPECT_EQ(http.exit_code, 2) << http.out;
  EXPECT_NE(http.out.find("upstream_http=false"), std::string::npos) << http.out;
}

TEST(TrainerHostileTest, EmptyTrainingDataFailsInsteadOfSpinning) {
  TempDir dir;
  WriteEmptyData(dir, 0);
  // The IDX training files without rows (the test files too: never reached).
  ProgramRun idx =
      Program(TRAINER_PATH, fmt::format("--no_progress --idx_dir={} --fresh_budget=128 "
                                        "--json={}",
                                        dir.path(), dir.File("r.json")));
  EXPECT_EQ(idx.exit_code, 1) << idx.out;
  EXPECT_NE(idx.out.find("FAILED_PRECONDITION: no records in " + dir.path()), std::string::npos)
      << idx.out;
  EXPECT_FALSE(std::filesystem::exists(dir.File("r.json")));
  // TFRecord shards without records, repeated epoch after epoch.
  TempDir test_set;
  WriteEmptyData(test_set, 16);
  ProgramRun shards = Program(
      TRAINER_PATH, fmt::format("--no_progress --idx_dir={} --fresh_budget=128 --train_shards={}",
                                test_set.path(), dir.File("empty.tfrecord")));
  EXPECT_EQ(shards.exit_code, 1) << shards.out;
  EXPECT_NE(shards.out.find("FAILED_PRECONDITION: no records in " + dir.File("empty.tfrecord")),
            std::string::npos)
      << shards.out;
}

// --help lists the trainer's own flags (Abseil lists those of a file named
// after the program), not "No flags matched".
TEST(TrainerHostileTest, HelpListsTheFlags) {
  ProgramRun r = Program(TRAINER_PATH, "--help");
  for (const char* flag : {"--echo (", "--insert (", "--train_shards (", "--json (", "--seed ("}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("No flags matched"), std::string::npos) << r.out;
}

// A path with an escape sequence is printed escaped (dataecho::TerminalSafe).
TEST(TrainerHostileTest, ControlCharactersAreEscapedOnTheTerminal) {
  ProgramRun r = Program(TRAINER_PATH, "--no_progress '--json=/nonexistent/\x1b[2Jx/r.json'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--json=/nonexistent/\\x1b[2Jx/r.json: cannot write it"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
}
#endif  // TRAINER_PATH

// The small examples take no flags: an unknown one is a usage error, not
// something to ignore.
TEST(ExamplesHostileTest, UnknownFlagsAreUsageErrors) {
  for (const char* path : {
#ifdef QUICKSTART_PATH
           QUICKSTART_PATH,
#endif
#ifdef BATCH_ECHO_PATH
           BATCH_ECHO_PATH,
#endif
       }) {
    ProgramRun r = Program(path, "--bogus=1");
    EXPECT_EQ(r.exit_code, 2) << path << "\n" << r.out;
    EXPECT_NE(r.out.find("usage:"), std::string::npos) << r.out;
    EXPECT_EQ(Program(path, "--help").exit_code, 0) << path;
  }
#ifdef S3_TFRECORD_ECHO_PATH
  for (const char* args : {"--bogus", "x abc", "x 0.5", "x inf"}) {
    ProgramRun r = Program(S3_TFRECORD_ECHO_PATH, args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
  }
#endif
}

}  // namespace
}  // namespace dataecho
