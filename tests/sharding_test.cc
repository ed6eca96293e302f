// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/sharding.h"

#include <climits>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "dataecho/checkpoint.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/shuffle.h"
#include "dataecho/storage/local_store.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

class ShardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) unsetenv(v);
  }
  void TearDown() override { SetUp(); }
  static constexpr const char* kVars[] = {
      "RANK",         "WORLD_SIZE",  "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
      "SLURM_PROCID", "SLURM_NTASKS"};

  static std::vector<std::string> Files(int n) {
    std::vector<std::string> files;
    for (int i = 0; i < n; ++i) files.push_back("f" + std::to_string(100 + i));
    return files;
  }
};

TEST_F(ShardingTest, EveryFileLandsInExactlyOneShard) {
  const std::vector<std::string> files = Files(23);
  std::map<std::string, int> seen;
  for (int rank = 0; rank < 4; ++rank) {
    auto shard = ResolveShard({.rank = rank, .world_size = 4});
    ASSERT_TRUE(shard.ok());
    absl::StatusOr<std::vector<std::string>> mine = ShardUris(files, *shard);
    ASSERT_TRUE(mine.ok()) << mine.status();
    EXPECT_GE(mine->size(), 5u);
    EXPECT_LE(mine->size(), 6u);
    for (const auto& f : *mine) ++seen[f];
  }
  ASSERT_EQ(seen.size(), files.size());
  for (const auto& [f, n] : seen) EXPECT_EQ(n, 1) << f;
}

// Five TFRecord files of 3 records each ("f<file>r<record>").
std::vector<std::string> WriteFiles(const testing::TempDir& dir) {
  std::vector<std::string> uris;
  for (int f = 0; f < 5; ++f) {
    uris.push_back(dir.File("part-" + std::to_string(f)));
    auto writer = TFRecordWriter::Create(uris.back());
    for (int r = 0; r < 3; ++r) {
      EXPECT_TRUE((*writer)->Write("f" + std::to_string(f) + "r" + std::to_string(r)).ok());
    }
    EXPECT_TRUE((*writer)->Close().ok());
  }
  return uris;
}

TEST_F(ShardingTest, ShardSourcesNumberRecordsAsTheWholeListDoes) {
  testing::TempDir dir;
  const std::vector<std::string> uris = WriteFiles(dir);
  std::shared_ptr<ObjectStore> store = NewLocalStore();
  std::map<uint64_t, std::string> whole;  // source_index -> payload
  const std::vector<Record> all = *testing::Drain(*MakeTFRecordSource(store, uris));
  for (const Record& r : all) whole[r.source_index] = std::string(r.data.view());
  ASSERT_EQ(whole.size(), 15u);
  std::map<uint64_t, std::string> from_shards;
  for (int rank = 0; rank < 2; ++rank) {
    const Shard shard{rank, 2, "options"};
    InterleaveOptions interleave;
    SetShardFileNumbering(shard, &interleave);
    for (int cycle : {1, 2}) {
      interleave.cycle_length = cycle;
      const std::vector<Record> mine =
          *testing::Drain(*MakeTFRecordSource(store, *ShardUris(uris, shard), {}, interleave));
      for (const Record& r : mine) {
        EXPECT_EQ(r.source_index >> kRecordIndexBits,
                  static_cast<uint64_t>(r.data.view()[1] - '0'));  // the file's number in `uris`
        if (cycle == 1) {
          EXPECT_TRUE(from_shards.emplace(r.source_index, std::string(r.data.view())).second)
              << "index " << r.source_index << " in two shards";
        }
      }
    }
  }
  EXPECT_EQ(from_shards, whole);  // unique across the job, and the same as in the whole list
}

TEST_F(ShardingTest, AShardsBufferedRecordsAreReadAgainByTheirNumbers) {
  testing::TempDir dir;
  const std::vector<std::string> uris = WriteFiles(dir);
  const Shard shard{1, 2, "options"};
  auto make = [&] {
    InterleaveOptions interleave;
    SetShardFileNumbering(shard, &interleave);
    return *ShuffleStage<Record>::Make(
        MakeTFRecordSource(NewLocalStore(), *ShardUris(uris, shard), {}, interleave),
        ShuffleOptions{.buffer_size = 4, .seed = 1});
  };
  StagePtr<Record> first = make();
  ASSERT_TRUE((*first->Next()).has_value());
  StateWriter w;
  ASSERT_TRUE(first->SaveState(w).ok());
  const std::string state = w.Finish();
  std::vector<std::string> rest;
  const std::vector<Record> first_rest = *testing::Drain(*first);
  for (const Record& rec : first_rest) rest.emplace_back(rec.data.view());
  StagePtr<Record> again = make();
  absl::StatusOr<StateReader> r = StateReader::Parse(state);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(again->RestoreState(*r).ok()) << again->RestoreState(*r);
  std::vector<std::string> resumed;
  const std::vector<Record> again_rest = *testing::Drain(*again);
  for (const Record& rec : again_rest) resumed.emplace_back(rec.data.view());
  EXPECT_EQ(resumed, rest);
  // Another shard's source is another pipeline: its state does not fit.
  InterleaveOptions other;
  SetShardFileNumbering(Shard{0, 2, "options"}, &other);
  StagePtr<Record> wrong = *ShuffleStage<Record>::Make(
      MakeTFRecordSource(NewLocalStore(), *ShardUris(uris, shard), {}, other),
      ShuffleOptions{.buffer_size = 4, .seed = 1});
  StateWriter here;
  ASSERT_TRUE(wrong->SaveState(here).ok());
  EXPECT_EQ(CompareShapes(StateReader::Parse(state)->shape(), here.shape()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ShardingTest, FileNumbersThatCannotBeDistinctAreRefused) {
  testing::TempDir dir;
  const std::vector<std::string> uris = WriteFiles(dir);
  InterleaveOptions zero;
  zero.file_index_stride = 0;
  absl::StatusOr<std::optional<Record>> r =
      MakeTFRecordSource(NewLocalStore(), uris, {}, zero)->Next();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("file_index_stride"), std::string::npos) << r.status();
  InterleaveOptions huge;
  huge.first_file_index = (uint64_t{1} << 24) - 3;  // 5 files do not fit under 2^24
  EXPECT_EQ(MakeTFRecordSource(NewLocalStore(), uris, {}, huge)->Next().status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ShardingTest, EnvironmentOfEachLauncher) {
  auto none = ResolveShard({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->world_size, 1);
  setenv("SLURM_PROCID", "2", 1);
  setenv("SLURM_NTASKS", "3", 1);
  auto slurm = ResolveShard({});
  ASSERT_TRUE(slurm.ok());
  EXPECT_EQ(slurm->rank, 2);
  EXPECT_EQ(slurm->source, "SLURM_PROCID");
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  EXPECT_EQ(ResolveShard({})->world_size, 8);
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "6", 1);
  EXPECT_EQ(ResolveShard({})->rank, 5);
  EXPECT_EQ(ResolveShard({.rank = 0, .world_size = 2})->source, "options");  // options win
  setenv("RANK", "6", 1);
  EXPECT_EQ(ResolveShard({}).status().code(), absl::StatusCode::kInvalidArgument);
  setenv("RANK", "x", 1);
  EXPECT_EQ(ResolveShard({}).status().code(), absl::StatusCode::kInvalidArgument);
  unsetenv("WORLD_SIZE");
  EXPECT_EQ(ResolveShard({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveShard({.rank = 1}).status().code(), absl::StatusCode::kInvalidArgument);
}

// WORLD_SIZE=2147483647 from a launcher's environment is refused as the same
// value in the options is (`dataecho shards` sized a table of 2^31 ranks by
// it and aborted), naming the variables; the largest world size is accepted.
TEST_F(ShardingTest, WorldSizeAboveTheMaximumIsRefusedFromTheEnvironmentToo) {
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "2147483647", 1);
  absl::StatusOr<Shard> env = ResolveShard({});
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument) << env.status();
  EXPECT_EQ(env.status().message(),
            "invalid shard from RANK (RANK=0 and WORLD_SIZE=2147483647): world size 2147483647 is "
            "above 1048576 (ShardOptions::kMaxWorldSize)");
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", std::to_string(ShardOptions::kMaxWorldSize + 1).c_str(), 1);
  EXPECT_EQ(ResolveShard({}).status().code(), absl::StatusCode::kInvalidArgument);
  setenv("SLURM_NTASKS", std::to_string(ShardOptions::kMaxWorldSize).c_str(), 1);
  absl::StatusOr<Shard> largest = ResolveShard({});
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_EQ(largest->world_size, ShardOptions::kMaxWorldSize);

  EXPECT_EQ(
      ResolveShard({.rank = 0, .world_size = ShardOptions::kMaxWorldSize + 1}).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShardUris(Files(4), Shard{.rank = 0, .world_size = INT_MAX}).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  EXPECT_EQ(MeasureShards(*store, Files(4), INT_MAX).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// 4 files, WORLD_SIZE=8 RANK=5: the rank used to get no file, silently, and
// a data-parallel job then hangs at its first epoch end.
// A rank outside [0, world_size) is said to be out of range, -1 included (it
// means "from the environment" only with world_size -1): not "set both".
TEST_F(ShardingTest, RankOutOfRangeSaysSo) {
  const struct {
    ShardOptions options;
    const char* message;
  } cases[] = {
      {{.rank = -1, .world_size = 4}, "rank -1 is out of range [0, 4) for world_size 4"},
      {{.rank = 4, .world_size = 4}, "rank 4 is out of range [0, 4) for world_size 4"},
      {{.rank = -7, .world_size = 4}, "rank -7 is out of range [0, 4)"},
      {{.rank = -5}, "rank -5 is out of range"},  // used to fall back to the environment
      {{.rank = 0, .world_size = 0}, "world_size 0 is out of range"},
      {{.rank = 2}, "rank 2 set without world_size"},
  };
  for (const auto& c : cases) {
    absl::Status s = ResolveShard(c.options).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
  }
  EXPECT_TRUE(ResolveShard({.rank = -1, .world_size = -1}).ok());  // both from the environment
}

TEST_F(ShardingTest, ARankWithoutDataIsAnError) {
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "8", 1);
  absl::StatusOr<Shard> shard = ResolveShard({});
  ASSERT_TRUE(shard.ok()) << shard.status();
  absl::StatusOr<std::vector<std::string>> mine = ShardUris(Files(4), *shard);
  ASSERT_EQ(mine.status().code(), absl::StatusCode::kFailedPrecondition) << mine.status();
  for (const char* part : {"rank 5 of world size 8 (from RANK) would get no file",
                           "4 file(s) for 8 ranks leave ranks 4-7 without data",
                           "use at most 4 rank(s)", "ShardOptions::allow_empty"}) {
    EXPECT_NE(mine.status().message().find(part), std::string::npos) << part << "\n"
                                                                     << mine.status();
  }
  // The ranks that do get a file still get it.
  for (int rank = 0; rank < 8; ++rank) {
    auto r = ShardUris(Files(4), *ResolveShard({.rank = rank, .world_size = 8}));
    EXPECT_EQ(r.ok(), rank < 4) << rank << ": " << r.status();
  }
}

TEST_F(ShardingTest, EveryLauncherGetsTheErrorNamingItsVariables) {
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  auto ompi = ShardUris(Files(3), *ResolveShard({}));
  EXPECT_EQ(ompi.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(ompi.status().message().find("rank 3 of world size 4 (from OMPI_COMM_WORLD_RANK)"),
            std::string::npos)
      << ompi.status();
  EXPECT_NE(ompi.status().message().find("leave rank 3 without data"), std::string::npos)
      << ompi.status();
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("SLURM_PROCID", "2", 1);
  setenv("SLURM_NTASKS", "3", 1);
  auto slurm = ShardUris(Files(2), *ResolveShard({}));
  EXPECT_EQ(slurm.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(slurm.status().message().find("(from SLURM_PROCID)"), std::string::npos)
      << slurm.status();
  EXPECT_TRUE(ShardUris(Files(3), *ResolveShard({})).ok());
}

TEST_F(ShardingTest, AnEmptyShardOnlyWhenAskedFor) {
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "8", 1);
  absl::StatusOr<Shard> shard = ResolveShard({.allow_empty = true});
  ASSERT_TRUE(shard.ok());
  EXPECT_TRUE(shard->allow_empty);
  absl::StatusOr<std::vector<std::string>> mine = ShardUris(Files(4), *shard);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(mine->empty());
  auto explicit_shard = ResolveShard({.rank = 6, .world_size = 8, .allow_empty = true});
  ASSERT_TRUE(explicit_shard.ok());
  EXPECT_TRUE(ShardUris(Files(4), *explicit_shard).ok());
  // No file at all is no data too.
  auto empty = ShardUris({}, *ResolveShard({.rank = 0, .world_size = 1}));
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(empty.status().message().find("the file list is empty"), std::string::npos);
  // A shard outside its world is refused, not silently empty.
  EXPECT_EQ(ShardUris(Files(4), Shard{.rank = 4, .world_size = 4}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

class MeasureShardsTest : public ShardingTest {
 protected:
  // Files of 100, 200, 300 and 400 bytes.
  std::vector<std::string> WriteFiles() {
    std::vector<std::string> uris;
    for (int i = 0; i < 4; ++i) {
      const std::string path = dir_.File("part-" + std::to_string(i));
      testing::WriteFileOrDie(path, std::string(static_cast<size_t>(100 * (i + 1)), 'x'));
      uris.push_back(path);
    }
    return uris;
  }
  testing::TempDir dir_;
  std::shared_ptr<ObjectStore> store_ = OpenObjectStore();
};

// 4 files between 3 ranks: 2/1/1 files, reported in bytes.
TEST_F(MeasureShardsTest, ReportsEveryRanksFilesAndBytes) {
  const std::vector<std::string> uris = WriteFiles();
  absl::StatusOr<ShardSizes> sizes = MeasureShards(*store_, uris, 3);
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  ASSERT_EQ(sizes->ranks.size(), 3u);
  EXPECT_EQ(sizes->ranks[0].files, 2);
  EXPECT_EQ(sizes->ranks[0].bytes, 500);
  EXPECT_EQ(sizes->ranks[1].files, 1);
  EXPECT_EQ(sizes->ranks[1].bytes, 200);
  EXPECT_EQ(sizes->ranks[2].files, 1);
  EXPECT_EQ(sizes->ranks[2].bytes, 300);
  EXPECT_DOUBLE_EQ(sizes->Imbalance(), 2.5);
  EXPECT_EQ(sizes->Summary(),
            "3 rank(s) over 4 file(s): files 2/1/1, bytes 500/200/300, largest/smallest 2.50");
  // The same split as ShardUris'.
  for (int rank = 0; rank < 3; ++rank) {
    auto mine = ShardUris(uris, *ResolveShard({.rank = rank, .world_size = 3}));
    ASSERT_TRUE(mine.ok());
    EXPECT_EQ(static_cast<int64_t>(mine->size()), sizes->ranks[static_cast<size_t>(rank)].files);
  }
}

TEST_F(MeasureShardsTest, RanksWithoutDataShowAsSuch) {
  absl::StatusOr<ShardSizes> sizes = MeasureShards(*store_, WriteFiles(), 8);
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  EXPECT_EQ(sizes->ranks[5].files, 0);
  EXPECT_TRUE(std::isinf(sizes->Imbalance()));
  EXPECT_NE(sizes->Summary().find("files 1/1/1/1/0/0/0/0"), std::string::npos) << sizes->Summary();
  EXPECT_NE(sizes->Summary().find("inf (a rank has no data)"), std::string::npos);
  EXPECT_EQ(MeasureShards(*store_, WriteFiles(), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto missing = MeasureShards(*store_, {dir_.File("nope")}, 1);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
}

}  // namespace
}  // namespace dataecho
