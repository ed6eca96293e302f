// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fashion_mnist_trainer's --checkpoint_dir against what a careless user or an
// attacker does to it (real processes, real files): IDX training data changed
// under a checkpoint is DATA_LOSS naming the file at --resume; a second
// trainer on the same directory is refused at its start, naming the first,
// and the first trains on untouched; an unwritable directory, or a regular
// file given as one, fails before any training; a FIFO named like a
// checkpoint does not hang --resume.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "dataecho/checkpoint_dir.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/programs.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ProgramRun;
using ::dataecho::testing::RunShell;
using ::dataecho::testing::TempDir;

// Runs the trainer with `args` (at most 120 s: a hang fails the test).
ProgramRun Trainer(const std::string& args) {
  return RunShell(fmt::format("timeout 120 '{}' {}", TRAINER_PATH, args));
}

// IDX training and test files of `rows` 28x28 rows in `dir`: pixels from the
// row, labels row % 10 + `label_shift` (mod 10).
void WriteIdx(const TempDir& dir, uint32_t rows, int label_shift) {
  std::string images("\0\0\x08\x03", 4), labels("\0\0\x08\x01", 4);
  for (uint32_t d : {rows, 28u, 28u}) {
    for (int s = 24; s >= 0; s -= 8) images += static_cast<char>((d >> s) & 0xff);
  }
  for (int s = 24; s >= 0; s -= 8) labels += static_cast<char>((rows >> s) & 0xff);
  for (uint32_t r = 0; r < rows; ++r) {
    for (int i = 0; i < 784; ++i) images += static_cast<char>((r * 7 + i) % 251);
    labels += static_cast<char>((r + label_shift) % 10);
  }
  for (const char* set : {"train", "t10k"}) {
    testing::WriteFileOrDie(dir.File(fmt::format("{}-images-idx3-ubyte.gz", set)),
                            testing::Gzip(images));
    testing::WriteFileOrDie(dir.File(fmt::format("{}-labels-idx1-ubyte.gz", set)),
                            testing::Gzip(labels));
  }
}

std::string Base(const TempDir& data, int64_t budget) {
  return fmt::format("--no_progress --idx_dir={} --fresh_budget={} --eval_every={} --batch_size=32",
                     data.path(), budget, budget);
}

TEST(TrainerCheckpointDirTest, IdxDataChangedUnderACheckpointIsDataLossNamingIt) {
  TempDir data, ck;
  WriteIdx(data, 64, 0);
  const std::string args =
      Base(data, 640) + fmt::format(" --checkpoint_dir={} --checkpoint_every=5", ck.path());
  ProgramRun first = Trainer(args);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  // The same files: the run resumes.
  ProgramRun same = Trainer(args + " --resume");
  ASSERT_EQ(same.exit_code, 0) << same.out;
  EXPECT_NE(same.out.find("resumed from"), std::string::npos) << same.out;
  // Every training label shifted by one (re-gzipped): DATA_LOSS naming the file.
  WriteIdx(data, 64, 1);
  ProgramRun changed = Trainer(args + " --resume");
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_NE(changed.out.find("DATA_LOSS"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("train-labels-idx1-ubyte.gz"), std::string::npos) << changed.out;
}

TEST(TrainerCheckpointDirTest, ASecondTrainerIsRefusedNamingTheFirst) {
  TempDir data, ck;
  WriteIdx(data, 64, 0);
  const std::string args =
      Base(data, 100000000) + fmt::format(" --checkpoint_dir={} --checkpoint_every=2", ck.path());
  const std::string log = ck.File("first.log");
  const pid_t first =
      testing::StartProgram(TRAINER_PATH, absl::StrSplit(args, ' ', absl::SkipEmpty()), log);
  // Until the first holds the directory (its lock file names it) and has
  // written a checkpoint (polled, for at most 120 s).
  const std::string me = fmt::format("pid {} ", first);
  auto lock_names_first = [&] {
    std::ifstream in(ck.File("LOCK"));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find(me) != std::string::npos;
  };
  // Any checkpoint: the first keeps only its newest two, so one named file
  // (ckpt-...002) can be gone within milliseconds, between two polls.
  bool holding = false;
  for (int i = 0; i < 6000 && !holding; ++i) {
    holding = lock_names_first() && !testing::CheckpointFiles(ck.path()).empty();
    if (!holding) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(holding) << testing::ReadFileOrDie(log);
  ProgramRun second = Trainer(args);
  EXPECT_EQ(second.exit_code, 1) << second.out;
  EXPECT_NE(second.out.find("another writer"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find(me), std::string::npos) << second.out;
  // The first trains on: more checkpoints come, and it was not stopped.
  int status = 0;
  EXPECT_EQ(waitpid(first, &status, WNOHANG), 0) << testing::ReadFileOrDie(log);
  kill(first, SIGKILL);
  waitpid(first, &status, 0);
  // Its checkpoints are whole.
  absl::StatusOr<std::unique_ptr<CheckpointDir>> dir = CheckpointDir::OpenForReading(ck.path());
  ASSERT_TRUE(dir.ok()) << dir.status();
  absl::StatusOr<std::optional<Checkpoint>> newest = (*dir)->ReadNewest();
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_TRUE(newest->has_value());
}

TEST(TrainerCheckpointDirTest, AnUnusableDirectoryFailsBeforeAnyTraining) {
  TempDir data, tmp;
  WriteIdx(data, 64, 0);
  // As root a directory's permission bits do not stop a write: a read-only
  // file system's directory (/sys) stands in for an unwritable one.
  std::string ro = tmp.File("ro");
  if (geteuid() == 0) {
    ro = "/sys";
  } else {
    ASSERT_EQ(mkdir(ro.c_str(), 0555), 0);
  }
  ProgramRun unwritable =
      Trainer(Base(data, 64000) + fmt::format(" --checkpoint_dir={} "
                                              "--checkpoint_every=2000 --json={}",
                                              ro, tmp.File("r.json")));
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.out;
  EXPECT_NE(unwritable.out.find(ro), std::string::npos) << unwritable.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.File("r.json")));  // not one step trained
  // A regular file as the directory, with --resume only: an error, not a fresh start.
  testing::WriteFileOrDie(tmp.File("file"), "x");
  ProgramRun file = Trainer(Base(data, 640) + fmt::format(" --checkpoint_dir={} --resume --json={}",
                                                          tmp.File("file"), tmp.File("r.json")));
  EXPECT_EQ(file.exit_code, 1) << file.out;
  EXPECT_NE(file.out.find(tmp.File("file") + " is not a directory"), std::string::npos) << file.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.File("r.json")));
}

TEST(TrainerCheckpointDirTest, AFifoNamedLikeACheckpointDoesNotHangResume) {
  TempDir data, ck;
  WriteIdx(data, 64, 0);
  const std::string args =
      Base(data, 640) + fmt::format(" --checkpoint_dir={} --checkpoint_every=5", ck.path());
  ASSERT_EQ(Trainer(args).exit_code, 0);
  ASSERT_EQ(mkfifo(ck.File("ckpt-000000009999.dtc").c_str(), 0644), 0);
  ProgramRun resumed = Trainer(args + " --resume");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("ckpt-000000009999.dtc: not a regular file"), std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.out.find("resumed from"), std::string::npos) << resumed.out;
}

}  // namespace
}  // namespace dataecho
