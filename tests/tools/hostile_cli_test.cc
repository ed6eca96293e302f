// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Hostile command lines through the built programs: `dataecho convert`
// failing part-way must leave earlier output intact, limits are checked
// before anything is written, numbers that parse but mean nothing are usage
// errors (exit status 2), output paths are checked before the run, empty
// datasets fail instead of spinning, and control characters never reach the
// terminal raw.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/programs.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ProgramRun;
using ::dataecho::testing::RunShell;
using ::dataecho::testing::TempDir;

// Runs the shell command `cmd` (stdout and stderr captured apart).
ProgramRun Shell(const TempDir& dir, const std::string& cmd) {
  return RunShell(cmd, dir.File(".stderr"));
}

ProgramRun Dataecho(const TempDir& dir, const std::string& args) {
  return Shell(dir, fmt::format("'{}' {}", DATAECHO_TOOL_PATH, args));
}

// The names in `dir` (the captured stderr excepted), sorted.
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = e.path().lexically_relative(dir).string();
    if (name != ".stderr") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// `rows` IDX images of 4x4 (row r holds bytes r*16 + i) and their labels.
struct Idx {
  std::string images, labels;
};
Idx MakeIdx(uint32_t rows, uint32_t label_rows) {
  auto header = [](std::string magic, std::vector<uint32_t> dims) {
    for (uint32_t d : dims) {
      for (int s = 24; s >= 0; s -= 8) magic += static_cast<char>((d >> s) & 0xff);
    }
    return magic;
  };
  Idx idx{header(std::string("\0\0\x08\x03", 4), {rows, 4, 4}),
          header(std::string("\0\0\x08\x01", 4), {label_rows})};
  for (uint32_t r = 0; r < rows; ++r) {
    for (int i = 0; i < 16; ++i) idx.images += static_cast<char>((r * 16 + i) * 7919 % 251);
  }
  for (uint32_t r = 0; r < label_rows; ++r) idx.labels += static_cast<char>(r % 10);
  return idx;
}

std::string ConvertArgs(const std::string& images, const std::string& labels,
                        const std::string& output, int shards = 3) {
  return fmt::format("convert --images='{}' --labels='{}' --output='{}' --shards={}", images,
                     labels, output, shards);
}

// Converts 7 good examples into out/train-0000N-of-00003.tfrecord and
// returns the shards' contents.
std::vector<std::string> ConvertGoodShards(const TempDir& dir) {
  const Idx good = MakeIdx(7, 7);
  std::filesystem::create_directories(dir.File("out"));
  testing::WriteFileOrDie(dir.File("good-images"), good.images);
  testing::WriteFileOrDie(dir.File("good-labels"), good.labels);
  ProgramRun r = Dataecho(
      dir, ConvertArgs(dir.File("good-images"), dir.File("good-labels"), dir.File("out/train")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> shards;
  for (int s = 0; s < 3; ++s) {
    shards.push_back(
        testing::ReadFileOrDie(dir.File(fmt::format("out/train-{:05d}-of-00003.tfrecord", s))));
  }
  return shards;
}

void ExpectShardsUnchanged(const TempDir& dir, const std::vector<std::string>& before) {
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(
        testing::ReadFileOrDie(dir.File(fmt::format("out/train-{:05d}-of-00003.tfrecord", s))),
        before[static_cast<size_t>(s)])
        << "shard " << s;
  }
  // No temporary file left next to them.
  EXPECT_EQ(Listing(dir.File("out")), (std::vector<std::string>{"train-00000-of-00003.tfrecord",
                                                                "train-00001-of-00003.tfrecord",
                                                                "train-00002-of-00003.tfrecord"}));
}

TEST(ConvertTest, MismatchedCountsLeaveExistingShardsIntact) {
  TempDir dir;
  const std::vector<std::string> before = ConvertGoodShards(dir);
  const Idx bad = MakeIdx(7, 6);
  testing::WriteFileOrDie(dir.File("images"), bad.images);
  testing::WriteFileOrDie(dir.File("labels"), bad.labels);
  ProgramRun r =
      Dataecho(dir, ConvertArgs(dir.File("images"), dir.File("labels"), dir.File("out/train")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("have 7 rows but labels"), std::string::npos) << r.err;
  ExpectShardsUnchanged(dir, before);
}

TEST(ConvertTest, CorruptGzipMidStreamLeavesEarlierOutputIntact) {
  TempDir dir;
  const std::vector<std::string> before = ConvertGoodShards(dir);
  const Idx big = MakeIdx(4000, 4000);
  std::string gz = testing::Gzip(big.images);
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] = static_cast<char>(~gz[i]);
  testing::WriteFileOrDie(dir.File("images.gz"), gz);
  testing::WriteFileOrDie(dir.File("labels"), big.labels);
  ProgramRun r =
      Dataecho(dir, ConvertArgs(dir.File("images.gz"), dir.File("labels"), dir.File("out/train")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("DATA_LOSS"), std::string::npos) << r.err;
  ExpectShardsUnchanged(dir, before);
}

TEST(ConvertTest, CreatesMissingDirectoriesAndNamesFileBytes) {
  TempDir dir;
  const Idx idx = MakeIdx(5, 5);
  testing::WriteFileOrDie(dir.File("images"), idx.images);
  testing::WriteFileOrDie(dir.File("labels"), idx.labels);
  ProgramRun r = Dataecho(
      dir, ConvertArgs(dir.File("images"), dir.File("labels"), dir.File("a/b/c/train"), 2));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t size = 0;
  for (int s = 0; s < 2; ++s)
    size += std::filesystem::file_size(
        dir.File(fmt::format("a/b/c/train-{:05d}-of-00002.tfrecord", s)));
  EXPECT_EQ(r.out.rfind(fmt::format("{{\"records\": 5, \"shards\": 2, \"encoding\": \"raw\", "
                                    "\"file_bytes\": {}, \"files\": [",
                                    size),
                        0),
            0u)
      << r.out;
  // A failed convert removes the directories it created.
  const Idx bad = MakeIdx(5, 4);
  testing::WriteFileOrDie(dir.File("labels4"), bad.labels);
  ProgramRun failed =
      Dataecho(dir, ConvertArgs(dir.File("images"), dir.File("labels4"), dir.File("x/y/train"), 2));
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.File("x"))) << failed.err;
}

// Lower the limit of open files (soft and hard) in the shell that runs the
// convert: it must fail before creating a single file.
TEST(ConvertTest, OpenFileLimitIsCheckedBeforeAnyFileIsCreated) {
  TempDir dir;
  const Idx idx = MakeIdx(5, 5);
  testing::WriteFileOrDie(dir.File("images"), idx.images);
  testing::WriteFileOrDie(dir.File("labels"), idx.labels);
  std::filesystem::create_directories(dir.File("out"));
  const std::string convert =
      fmt::format("'{}' {}", DATAECHO_TOOL_PATH,
                  ConvertArgs(dir.File("images"), dir.File("labels"), dir.File("out/train"), 200));
  ProgramRun r = Shell(dir, "ulimit -S -n 64 && ulimit -H -n 64 && " + convert);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("RESOURCE_EXHAUSTED: --shards=200 needs 232 open files"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ulimit -n"), std::string::npos) << r.err;
  EXPECT_EQ(Listing(dir.path()), (std::vector<std::string>{"images", "labels", "out"}));
  // With a higher hard limit, the soft one is raised and the convert runs.
  ProgramRun raised = Shell(dir, "ulimit -S -n 64 && " + convert);
  EXPECT_EQ(raised.exit_code, 0) << raised.err;
}

TEST(StatTest, IdxOrGzipWithoutFormatIdxSaysSo) {
  TempDir dir;
  const Idx idx = MakeIdx(3, 3);
  testing::WriteFileOrDie(dir.File("train-images-idx3-ubyte"), idx.images);
  testing::WriteFileOrDie(dir.File("train-images-idx3-ubyte.gz"), testing::Gzip(idx.images));
  testing::WriteFileOrDie(dir.File("gzipped"), testing::Gzip(idx.images));
  for (const char* name : {"train-images-idx3-ubyte", "train-images-idx3-ubyte.gz"}) {
    ProgramRun r = Dataecho(dir, "stat " + dir.File(name));
    EXPECT_EQ(r.exit_code, 1) << name;
    EXPECT_NE(r.err.find("this looks like an IDX file: use --format=idx"), std::string::npos)
        << name << ": " << r.err;
  }
  ProgramRun gz = Dataecho(dir, "stat " + dir.File("gzipped"));
  EXPECT_EQ(gz.exit_code, 1);
  EXPECT_NE(gz.err.find("this looks like a gzip stream: use --compression=gzip"), std::string::npos)
      << gz.err;
  ProgramRun ok = Dataecho(dir, "stat --format=idx " + dir.File("train-images-idx3-ubyte.gz"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("{\"records\": 3, \"payload_bytes\": 48, ", 0), 0u) << ok.out;
}

TEST(UsageTest, MeaninglessValuesAreUsageErrors) {
  TempDir dir;
  testing::WriteFileOrDie(dir.File("x"), "");
  const testing::UsageCase cases[] = {
      {"stat --format=fixed:1073741825 " + dir.File("x"), "record size N in 1..1073741824"},
      {"stat ''", "an empty URI"},
      {"convert --images=a --labels=b --output=", "--output is empty"},
      {"convert --images= --labels=b --output=c", "--images is empty"},
      {"convert --images=a --labels=b --output=" + dir.path() + "/", "names a directory"},
  };
  for (const testing::UsageCase& c : cases) {
    // Run in `dir`: nothing may be created there.
    EXPECT_TRUE(testing::IsUsageError(
        Shell(dir, fmt::format("cd '{}' && '{}' {}", dir.path(), DATAECHO_TOOL_PATH, c.args)),
        c.message))
        << c.args;
    EXPECT_EQ(Listing(dir.path()), std::vector<std::string>{"x"}) << c.args;
  }
  EXPECT_EQ(Dataecho(dir, "stat --format=fixed:1073741824 " + dir.File("x")).exit_code, 0);
}

// An escape sequence, a carriage return and a newline in user-chosen text:
// escaped ("\x1b") wherever the programs print it.
TEST(UsageTest, ControlCharactersAreEscapedOnTheTerminal) {
  TempDir dir;
  const std::string evil = "a\x1b[2J\rb\nFAKE: OK";
  for (const std::string& args :
       {"'" + evil + "'", "stat '--format=" + evil + "' x", "stat '" + dir.File(evil) + "'",
        "convert --images=a --labels=b '--output=" + evil + "/'",
        "convert '--images=" + dir.File(evil) + "' --labels=b --output=" + dir.File("o")}) {
    ProgramRun r = Dataecho(dir, args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err.find_first_of("\x1b\r"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("\nFAKE"), std::string::npos) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("a\\x1b[2J\\x0db\\x0aFAKE: OK"), std::string::npos) << args << "\n"
                                                                             << r.err;
  }
}

}  // namespace
}  // namespace dataecho
