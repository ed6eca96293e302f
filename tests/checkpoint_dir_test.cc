// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Tests of CheckpointDir (checkpoint_dir.h) on real files and real processes:
// the round trip of sections, the newest `keep` kept, a torn, bit-flipped or
// foreign newest file skipped for the one before with a warning, every file
// damaged is DATA_LOSS, a missing directory means "start fresh"; one writer
// per directory (a second one, in this process or another, refused naming the
// first; the lock gone with its holder); an unwritable directory or a regular
// file refused at open; FIFOs, devices and huge files skipped without being
// read; background writes.
#include "dataecho/checkpoint_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ReadFileOrDie;
using ::dataecho::testing::TempDir;
using ::dataecho::testing::WriteFileOrDie;

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<CheckpointSection> Payload(std::string_view text) {
  return {{"payload", absl::Cord(std::string(text))}};
}

// Opens `dir` for writing, failing the test if it cannot.
std::unique_ptr<CheckpointDir> Writer(const std::string& dir, CheckpointDirOptions options = {}) {
  absl::StatusOr<std::unique_ptr<CheckpointDir>> d =
      CheckpointDir::OpenForWriting(dir, std::move(options));
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : nullptr;
}

// The newest checkpoint of `dir`, read by a reader collecting warnings.
absl::StatusOr<std::optional<Checkpoint>> Read(const std::string& dir,
                                               std::vector<std::string>* warnings) {
  absl::StatusOr<std::unique_ptr<CheckpointDir>> d = CheckpointDir::OpenForReading(
      dir, {.warn = [warnings](std::string_view w) { warnings->emplace_back(w); }});
  if (!d.ok()) return d.status();
  return (*d)->ReadNewest();
}

TEST(CheckpointDirTest, SectionsRoundTripAndTheNewestTwoAreKept) {
  TempDir tmp;
  auto dir = Writer(tmp.path(), {.keep = 2});
  for (int64_t step : {5, 10, 15}) {
    absl::Cord model("weights ");
    model.Append(std::string(100000, static_cast<char>('a' + step)));  // several chunks
    ASSERT_TRUE(dir->Write(step, {{"pipeline", absl::Cord("state " + std::to_string(step))},
                                  {"model", model},
                                  {"empty", absl::Cord()}})
                    .ok());
  }
  EXPECT_EQ(Names(tmp.path()),
            (std::vector<std::string>{"LOCK", "ckpt-000000000010.dtc", "ckpt-000000000015.dtc"}));
  absl::StatusOr<std::optional<Checkpoint>> c = dir->ReadNewest();
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->step, 15);
  EXPECT_EQ((*c)->path, CheckpointDir::FilePath(tmp.path(), 15));
  ASSERT_NE((*c)->Section("pipeline"), nullptr);
  EXPECT_EQ(*(*c)->Section("pipeline"), "state 15");
  EXPECT_EQ((*c)->Section("model")->size(), 8u + 100000u);
  EXPECT_EQ(*(*c)->Section("empty"), "");
  EXPECT_EQ((*c)->Section("missing"), nullptr);
  // The file is what Encode() gives, and Parse() reads it back.
  const std::string bytes = ReadFileOrDie(CheckpointDir::FilePath(tmp.path(), 15));
  absl::StatusOr<Checkpoint> parsed = CheckpointDir::Parse("f", bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->sections, (*c)->sections);
}

// A pipeline's state held as a Cord (SaveStateCord()) is written chunk by
// chunk, as it is, into the same file as its flattened bytes, and loads back:
// the state restores the pipeline.
TEST(CheckpointDirTest, APipelineStateCordWritesTheSameFileAndRestores) {
  TempDir tmp;
  auto build = [] {
    return FromRange(0, 5000).Shuffle({.buffer_size = 1000, .seed = 3}).Prefetch({.depth = 4});
  };
  auto p = build();
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<absl::Cord> state = p.SaveStateCord();
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_GT(std::distance(state->Chunks().begin(), state->Chunks().end()), 1);
  ASSERT_TRUE(Writer(tmp.File("cord"))->Write(12, {{"pipeline", *state}}).ok());
  EXPECT_EQ(ReadFileOrDie(CheckpointDir::FilePath(tmp.File("cord"), 12)),
            CheckpointDir::Encode(12, {{"pipeline", absl::Cord(std::string(*state))}}));
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<Checkpoint>> c = Read(tmp.File("cord"), &warnings);
  ASSERT_TRUE(c.ok() && c->has_value()) << c.status();
  auto q = build();
  ASSERT_TRUE(q.RestoreState(*(*c)->Section("pipeline")).ok());
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<std::optional<int64_t>> a = p.Next();
    absl::StatusOr<std::optional<int64_t>> b = q.Next();
    ASSERT_TRUE(a.ok() && b.ok() && a->has_value() && b->has_value());
    EXPECT_EQ(**a, **b) << i;
  }
}

TEST(CheckpointDirTest, MissingOrEmptyDirectoryMeansStartFresh) {
  TempDir tmp;
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<Checkpoint>> missing = Read(tmp.File("none"), &warnings);
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->has_value());
  // Other files and a killed writer's temporary file are not checkpoints.
  WriteFileOrDie(tmp.File("notes.txt"), "x");
  WriteFileOrDie(tmp.File(".ckpt-000000000020.tmp-123"), "half");
  absl::StatusOr<std::optional<Checkpoint>> empty = Read(tmp.path(), &warnings);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  EXPECT_TRUE(warnings.empty());
  // A writer (holding the lock: the temporary file's writer is gone) removes it.
  auto dir = Writer(tmp.path(), {.warn = [&](std::string_view w) { warnings.emplace_back(w); }});
  EXPECT_EQ(Names(tmp.path()), (std::vector<std::string>{"LOCK", "notes.txt"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(".ckpt-000000000020.tmp-123"), std::string::npos) << warnings[0];
}

// Each way a newest file can be damaged: the one before is used, with a
// warning naming the damaged file and the reason.
TEST(CheckpointDirTest, DamagedNewestFallsBackToThePreviousOne) {
  const std::string good = CheckpointDir::Encode(8, Payload("newest payload"));
  struct Case {
    std::string name, bytes, reason;
  };
  std::string flipped = good;
  flipped[good.size() - 6] = static_cast<char>(flipped[good.size() - 6] ^ 0x10);
  std::string header_flip = good;
  header_flip[24] = static_cast<char>(header_flip[24] ^ 0x01);  // a byte of the section name
  std::string other_version = good;
  other_version[4] = 1;
  const std::vector<Case> cases = {
      {"torn", good.substr(0, good.size() - 3), "torn write"},
      {"header only", good.substr(0, 10), "shorter than its header"},
      {"empty", "", "shorter than its header"},
      {"bit flip", flipped, "CRC-32C"},
      {"header bit flip", header_flip, "header CRC-32C"},
      {"version", other_version, "format version 1"},
      {"magic", "XXXX" + good.substr(4), "bad magic"},
      {"other step", CheckpointDir::Encode(9, Payload("p")), "holds step 9"},
      {"longer", good + "extra", "the file has"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir tmp;
    ASSERT_TRUE(Writer(tmp.path())->Write(4, Payload("previous payload")).ok());
    WriteFileOrDie(CheckpointDir::FilePath(tmp.path(), 8), c.bytes);
    std::vector<std::string> warnings;
    absl::StatusOr<std::optional<Checkpoint>> r = Read(tmp.path(), &warnings);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->step, 4);
    EXPECT_EQ(*(*r)->Section("payload"), "previous payload");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(CheckpointDir::FilePath(tmp.path(), 8)), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find(c.reason), std::string::npos) << warnings[0];
  }
}

// After a resume from the checkpoint before a damaged one, the next write
// keeps two good checkpoints: the damaged later one goes.
TEST(CheckpointDirTest, WritingAfterAFallbackRemovesTheDamagedLaterOne) {
  TempDir tmp;
  auto dir = Writer(tmp.path());
  ASSERT_TRUE(dir->Write(4, Payload("a")).ok());
  WriteFileOrDie(CheckpointDir::FilePath(tmp.path(), 8), "damaged");
  ASSERT_TRUE(dir->Write(6, Payload("b")).ok());
  EXPECT_EQ(Names(tmp.path()),
            (std::vector<std::string>{"LOCK", "ckpt-000000000004.dtc", "ckpt-000000000006.dtc"}));
}

TEST(CheckpointDirTest, EveryCheckpointDamagedIsDataLoss) {
  TempDir tmp;
  {
    auto dir = Writer(tmp.path());
    ASSERT_TRUE(dir->Write(1, Payload("a")).ok());
    ASSERT_TRUE(dir->Write(2, Payload("b")).ok());
  }
  for (int64_t step : {1, 2}) {
    std::string bytes = ReadFileOrDie(CheckpointDir::FilePath(tmp.path(), step));
    bytes.back() = static_cast<char>(bytes.back() ^ 1);
    WriteFileOrDie(CheckpointDir::FilePath(tmp.path(), step), bytes);
  }
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<Checkpoint>> r = Read(tmp.path(), &warnings);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("no complete checkpoint in " + tmp.path()), std::string::npos)
      << r.status();
  EXPECT_EQ(warnings.size(), 2u);
}

// One writer per directory: a second writer is refused at open, naming the
// first (host and PID), also from another process; the first's files are
// untouched; once the first is gone the directory is free again.
TEST(CheckpointDirTest, ASecondWriterIsRefusedNamingTheFirst) {
  TempDir tmp;
  auto first = Writer(tmp.path());
  ASSERT_TRUE(first->Write(2, Payload("first")).ok());
  absl::StatusOr<std::unique_ptr<CheckpointDir>> second = CheckpointDir::OpenForWriting(tmp.path());
  ASSERT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_NE(second.status().message().find("another writer"), std::string::npos);
  EXPECT_NE(second.status().message().find("pid " + std::to_string(getpid())), std::string::npos)
      << second.status();
  // Another process is refused the same way (its exit code says so).
  const pid_t child = fork();
  if (child == 0) {
    absl::StatusOr<std::unique_ptr<CheckpointDir>> d = CheckpointDir::OpenForWriting(tmp.path());
    _exit(!d.ok() && d.status().code() == absl::StatusCode::kFailedPrecondition ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // Reading needs no lock; the first writer goes on.
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<Checkpoint>> r = Read(tmp.path(), &warnings);
  ASSERT_TRUE(r.ok() && r->has_value());
  ASSERT_TRUE(first->Write(4, Payload("first again")).ok());
  first.reset();
  EXPECT_TRUE(CheckpointDir::OpenForWriting(tmp.path()).ok());
}

// A writer killed while holding the lock frees it (the kernel drops it).
TEST(CheckpointDirTest, AKilledWritersLockIsFree) {
  TempDir tmp;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    absl::StatusOr<std::unique_ptr<CheckpointDir>> d = CheckpointDir::OpenForWriting(tmp.path());
    const char c = d.ok() ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(CheckpointDir::OpenForWriting(tmp.path()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]);
  close(ready[1]);
  EXPECT_TRUE(CheckpointDir::OpenForWriting(tmp.path()).ok());
}

TEST(CheckpointDirTest, ARegularFileIsNotADirectory) {
  TempDir tmp;
  WriteFileOrDie(tmp.File("file"), "x");
  for (bool write : {false, true}) {
    absl::StatusOr<std::unique_ptr<CheckpointDir>> d =
        write ? CheckpointDir::OpenForWriting(tmp.File("file"))
              : CheckpointDir::OpenForReading(tmp.File("file"));
    EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition) << d.status();
    EXPECT_NE(d.status().message().find(tmp.File("file") + " is not a directory"),
              std::string::npos)
        << d.status();
  }
  // Below a regular file: cannot be created.
  absl::StatusOr<std::unique_ptr<CheckpointDir>> below =
      CheckpointDir::OpenForWriting(tmp.File("file/sub"));
  EXPECT_FALSE(below.ok());
  EXPECT_NE(below.status().message().find(tmp.File("file")), std::string::npos) << below.status();
}

// An unwritable directory is refused when it is opened, not at the first
// write. (As root, permission bits do not stop a write: a read-only file
// system's directory, /sys, stands in.)
TEST(CheckpointDirTest, AnUnwritableDirectoryIsRefusedAtOpen) {
  TempDir tmp;
  std::string dir = tmp.File("ro");
  if (geteuid() == 0) {
    dir = "/sys";
    if (access("/sys", W_OK) == 0 && CheckpointDir::OpenForWriting(dir).ok()) {
      GTEST_SKIP() << "no directory this root user cannot write";
    }
  } else {
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    WriteFileOrDie(dir + "/LOCK", "");  // a lock file that opens: the probe must catch it
    ASSERT_EQ(chmod(dir.c_str(), 0555), 0);
  }
  absl::StatusOr<std::unique_ptr<CheckpointDir>> d = CheckpointDir::OpenForWriting(dir);
  EXPECT_FALSE(d.ok());
  EXPECT_TRUE(d.status().code() == absl::StatusCode::kPermissionDenied ||
              d.status().code() == absl::StatusCode::kUnavailable)
      << d.status();
  EXPECT_NE(d.status().message().find(dir), std::string::npos) << d.status();
  if (geteuid() != 0) chmod(dir.c_str(), 0755);
}

// Names of checkpoints that are not regular files, or huge ones, are skipped
// without blocking and without reading them whole.
TEST(CheckpointDirTest, FifosDevicesAndHugeFilesAreSkippedUnread) {
  TempDir tmp;
  ASSERT_TRUE(Writer(tmp.path())->Write(4, Payload("good")).ok());
  ASSERT_EQ(mkfifo(CheckpointDir::FilePath(tmp.path(), 9999).c_str(), 0644), 0);
  std::filesystem::create_symlink("/dev/zero", CheckpointDir::FilePath(tmp.path(), 9000));
  // 8 GB, sparse: a bad header (zeros), and a good header whose file is longer.
  for (int64_t step : {8000, 7000}) {
    const std::string path = CheckpointDir::FilePath(tmp.path(), step);
    WriteFileOrDie(path, step == 7000 ? CheckpointDir::Encode(7000, Payload("x")) : "");
    ASSERT_EQ(truncate(path.c_str(), off_t{8} << 30), 0);
  }
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<Checkpoint>> r = Read(tmp.path(), &warnings);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->step, 4);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_NE(warnings[0].find("ckpt-000000009999.dtc: not a regular file"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("ckpt-000000009000.dtc: not a regular file"), std::string::npos)
      << warnings[1];
  EXPECT_NE(warnings[2].find("bad magic"), std::string::npos) << warnings[2];
  EXPECT_NE(warnings[3].find("the file has 8589934592"), std::string::npos) << warnings[3];
}

// In the background, Write() returns at once; the file is there after
// Flush(), and an error comes back from the next Flush() or Write().
TEST(CheckpointDirTest, BackgroundWritesReportTheirErrorsLater) {
  TempDir tmp;
  auto dir = Writer(tmp.File("ckpt"), {.background = true});
  ASSERT_TRUE(dir->Write(3, Payload("three")).ok());
  ASSERT_TRUE(dir->Flush().ok());
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<Checkpoint>> r = Read(tmp.File("ckpt"), &warnings);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ(*(*r)->Section("payload"), "three");
  // The directory goes away under the writer: the write fails, later.
  std::filesystem::remove_all(tmp.File("ckpt"));
  EXPECT_TRUE(dir->Write(6, Payload("six")).ok());
  absl::Status s = dir->Flush();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("ckpt-000000000006.tmp"), std::string::npos) << s;
  EXPECT_TRUE(dir->Flush().ok());  // reported once
}

TEST(CheckpointDirTest, BadArgumentsAreRefused) {
  TempDir tmp;
  EXPECT_EQ(CheckpointDir::OpenForWriting(tmp.path(), {.keep = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckpointDir::OpenForWriting("").status().code(), absl::StatusCode::kInvalidArgument);
  auto dir = Writer(tmp.path());
  EXPECT_EQ(dir->Write(-1, Payload("x")).code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<CheckpointDir>> reader = CheckpointDir::OpenForReading(tmp.path());
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Write(1, Payload("x")).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace dataecho
