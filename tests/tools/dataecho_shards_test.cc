// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// `dataecho shards` through the built binary: the split of a file list
// between the ranks of a job, its sizes, the error for a rank without
// data, and a world size beyond the maximum from the environment.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "dataecho/formats/tfrecord.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/programs.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ProgramRun;
using ::dataecho::testing::RunShell;
using ::dataecho::testing::TempDir;

// Runs `env dataecho shards ARGS` with no launcher variables but those in `env`.
ProgramRun Shards(const TempDir& dir, const std::string& args, const std::string& env = "") {
  return RunShell(fmt::format("env -u RANK -u WORLD_SIZE -u OMPI_COMM_WORLD_RANK -u "
                              "OMPI_COMM_WORLD_SIZE -u SLURM_PROCID "
                              "-u SLURM_NTASKS {} '{}' shards {}",
                              env, DATAECHO_TOOL_PATH, args),
                  dir.File("stderr.txt"));
}

// dir/part-0..3.tfrecord with 10, 20, 30 and 40 records; returns their sizes.
std::vector<int64_t> WriteFourFiles(const TempDir& dir) {
  std::vector<int64_t> sizes;
  for (int f = 0; f < 4; ++f) {
    const std::string path = dir.File(fmt::format("part-{}.tfrecord", f));
    auto w = TFRecordWriter::Create(path);
    EXPECT_TRUE(w.ok());
    for (int i = 0; i < 10 * (f + 1); ++i) EXPECT_TRUE((*w)->Write(std::string(100, 'x')).ok());
    EXPECT_TRUE((*w)->Close().ok());
    sizes.push_back(static_cast<int64_t>(std::filesystem::file_size(path)));
  }
  return sizes;
}

// 4 files, WORLD_SIZE=8 RANK=5: ranks 4-7 get nothing. The split is printed,
// then the error names the rank, the world size and the file count.
TEST(DataechoShardsTest, ARankWithoutDataFailsAfterTheReport) {
  TempDir dir;
  const std::vector<int64_t> sizes = WriteFourFiles(dir);
  ProgramRun r = Shards(dir, "'" + dir.File("part-*.tfrecord") + "'", "WORLD_SIZE=8 RANK=5");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("FAILED_PRECONDITION: rank 5 of world size 8 (from RANK) would get no "
                       "file: 4 file(s) for 8 ranks leave ranks 4-7 without data"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find(R"({"world_size": 8, "rank": 5, "source": "RANK", "files": 4, )"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(fmt::format(R"({{"rank": 3, "files": 1, "bytes": {}}}, )"
                                   R"({{"rank": 4, "files": 0, "bytes": 0}})",
                                   sizes[3])),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("bytes_imbalance": null})"), std::string::npos) << r.out;

  ProgramRun allowed =
      Shards(dir, "--allow_empty '" + dir.File("part-*.tfrecord") + "'", "WORLD_SIZE=8 RANK=5");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, r.out);
  // This process's rank has data, another has none: still an error.
  ProgramRun other = Shards(dir, "--world_size=5 '" + dir.File("part-*.tfrecord") + "'");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("rank 4 of world size 5 (from options)"), std::string::npos)
      << other.err;
}

// 4 files between 3 ranks: 2/1/1 files; sizes in bytes, and in records with
// --records.
TEST(DataechoShardsTest, ReportsFilesBytesAndRecordsPerRank) {
  TempDir dir;
  const std::vector<int64_t> sizes = WriteFourFiles(dir);
  ProgramRun r = Shards(dir, "--world_size=3 --records '" + dir.File("part-*.tfrecord") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            fmt::format(R"({{"world_size": 3, "rank": 0, "source": "options", "files": 4, )"
                        R"("ranks": [{{"rank": 0, "files": 2, "bytes": {}, "records": 50}}, )"
                        R"({{"rank": 1, "files": 1, "bytes": {}, "records": 20}}, )"
                        R"({{"rank": 2, "files": 1, "bytes": {}, "records": 30}}], )"
                        R"("bytes_imbalance": {}, "records_imbalance": 2.5}})"
                        "\n",
                        sizes[0] + sizes[3], sizes[1], sizes[2],
                        fmt::format("{:.6g}", static_cast<double>(sizes[0] + sizes[3]) /
                                                  static_cast<double>(sizes[1]))));
  // The launchers' variables, as the library reads them.
  ProgramRun ompi = Shards(dir, "'" + dir.File("part-*.tfrecord") + "'",
                           "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2");
  EXPECT_EQ(ompi.exit_code, 0) << ompi.err;
  EXPECT_NE(ompi.out.find(R"("world_size": 2, "rank": 1, "source": "OMPI_COMM_WORLD_RANK")"),
            std::string::npos)
      << ompi.out;
  ProgramRun slurm =
      Shards(dir, "'" + dir.File("part-*.tfrecord") + "'", "SLURM_PROCID=0 SLURM_NTASKS=4");
  EXPECT_EQ(slurm.exit_code, 0) << slurm.err;
  EXPECT_NE(slurm.out.find(R"("world_size": 4, "rank": 0, "source": "SLURM_PROCID")"),
            std::string::npos)
      << slurm.out;
}

// WORLD_SIZE=2147483647 in the environment: refused at once, as
// --world_size=2147483647 is, naming the variables (it ran 24 s, grew to
// 3 GB and aborted on a table of 2^31 ranks).
TEST(DataechoShardsTest, WorldSizeFromTheEnvironmentIsCappedAsTheFlagIs) {
  TempDir dir;
  WriteFourFiles(dir);
  const std::string files = "'" + dir.File("part-*.tfrecord") + "'";
  ProgramRun r = Shards(dir, files, "WORLD_SIZE=2147483647 RANK=0");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("INVALID_ARGUMENT: invalid shard from RANK (RANK=0 and "
                       "WORLD_SIZE=2147483647): world size 2147483647 is above 1048576 "
                       "(ShardOptions::kMaxWorldSize)"),
            std::string::npos)
      << r.err;
  ProgramRun ompi = Shards(dir, files, "OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=1048577");
  EXPECT_EQ(ompi.exit_code, 1) << ompi.err;
  EXPECT_NE(ompi.err.find("OMPI_COMM_WORLD_SIZE=1048577"), std::string::npos) << ompi.err;
  ProgramRun flag = Shards(dir, "--world_size=2147483647 " + files);
  EXPECT_EQ(flag.exit_code, 2) << flag.err;
}

TEST(DataechoShardsTest, UsageErrors) {
  TempDir dir;
  WriteFourFiles(dir);
  const std::string files = " '" + dir.File("part-*.tfrecord") + "'";
  const testing::UsageCase cases[] = {
      {"", "no URI given"},
      {"--rank=1" + files, "--rank needs --world_size"},
      {"--world_size=0" + files, "--world_size must be an integer in [1, 1048576], got '0'"},
      {"--world_size=2 --rank=2" + files, "--rank must be an integer in [0, 1], got '2'"},
  };
  for (const testing::UsageCase& c : cases)
    EXPECT_TRUE(testing::IsUsageError(Shards(dir, c.args), c.message)) << c.args;
  ProgramRun bad_env = Shards(dir, files, "WORLD_SIZE=4 RANK=x");
  EXPECT_EQ(bad_env.exit_code, 1);
  EXPECT_NE(bad_env.err.find("INVALID_ARGUMENT"), std::string::npos) << bad_env.err;
  ProgramRun help = Shards(dir, "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--world_size=N"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--records"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace dataecho
