// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// SaveState / RestoreState of Zip, Interleave, Cache, PaddedBatch, adaptive
// and auto echo, and their epochs (Restart under a Repeat): a pipeline saved
// at a random position, destroyed, rebuilt and restored yields exactly the
// rest of an uninterrupted run; bad states end, never crash or spin. (Record
// sources: checkpoint_records_test.cc.)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/checkpoint.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "fuzz/state_stages_target.h"
#include "gtest/gtest.h"
#include "support/checkpoint_check.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using testing::CheckFlippedStatesEnd;
using testing::CheckResumes;
using testing::InterleavedFiles;
using testing::Key;
using testing::Rest;
using testing::Store;
using testing::WriteTFRecordFiles;

// Examples whose single int32 component has 1 + i % 5 elements.
std::vector<Example> Sequences(int64_t n) {
  std::vector<Example> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = 1 + i % 5;
    MutableBuffer mb(static_cast<size_t>(len) * 4);
    for (int64_t j = 0; j < len; ++j) {
      const auto v = static_cast<int32_t>(i * 10 + j);
      std::memcpy(mb.data() + j * 4, &v, 4);
    }
    Example e;
    e.components.push_back(*Tensor::Make(DType::kInt32, {len}, std::move(mb).Freeze()));
    e.source_index = static_cast<uint64_t>(i);
    e.label = i % 3;
    out.push_back(std::move(e));
  }
  return out;
}

using ExampleAndNumber = std::pair<Example, int64_t>;
using RecordPair = std::pair<Record, Record>;

TEST(CheckpointStagesTest, ZipEchoShuffleRepeat) {
  // Zip restarts (its epochs), passes references through its halves.
  EXPECT_GT(CheckResumes<ExampleAndNumber>([] {
              return FromVector(testing::MakeExamples(30))
                  .Zip(FromRange(100, 125))
                  .Repeat(3)
                  .Echo({.factor = 1.5, .seed = 4})
                  .Shuffle({.buffer_size = 8, .seed = 5});
            }),
            75u);
}

TEST(CheckpointStagesTest, ZipOfRecordsShuffle) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 9);
  EXPECT_EQ(CheckResumes<RecordPair>([&] {
              return From(MakeTFRecordSource(Store(), paths))
                  .Zip(From(MakeTFRecordSource(Store(), {paths[2], paths[0]})))
                  .Shuffle({.buffer_size = 5, .seed = 6});
            }),
            18u);
}

TEST(CheckpointStagesTest, ZipEndsAndRepeats) {
  // The shorter input ends the zip; Repeat starts both over.
  Pipeline<std::pair<int64_t, int64_t>> p = FromRange(0, 3).Zip(FromRange(10, 15)).Repeat(2);
  std::vector<std::string> got = Rest(p);
  EXPECT_EQ(got,
            (std::vector<std::string>{"0 | 10", "1 | 11", "2 | 12", "0 | 10", "1 | 11", "2 | 12"}));
}

TEST(CheckpointStagesTest, InterleaveOfFilesRepeatTake) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 5, 7);
  EXPECT_EQ(CheckResumes<Record>([&] { return InterleavedFiles(paths, 2, 3).Repeat(2).Take(60); }),
            60u);
  EXPECT_EQ(CheckResumes<Record>([&] { return InterleavedFiles(paths, 8, 1); }, 20, 2), 35u);
}

TEST(CheckpointStagesTest, InterleaveOfRangesRestartsEachEpoch) {
  auto make = [] {
    return FromRange(0, 4)
        .Interleave([](int64_t i) { return FromRange(i * 100, i * 100 + i + 1); },
                    {.cycle_length = 2})
        .Repeat(3);
  };
  Pipeline<int64_t> p = make();
  const std::vector<std::string> got = Rest(p);
  // Slot 0: range 0 ends after one element; slot 1 (range 1) goes on; slot 0
  // opens range 2, ...
  const std::vector<std::string> epoch = {"0",   "100", "101", "200", "201",
                                          "300", "202", "301", "302", "303"};
  std::vector<std::string> want;
  for (int e = 0; e < 3; ++e) want.insert(want.end(), epoch.begin(), epoch.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(CheckResumes<int64_t>(make), 30u);
}

TEST(CheckpointStagesTest, CacheFillingAndReplaying) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 8);
  // Saves fall in the filling epoch (0) and in the replayed ones (1, 2).
  EXPECT_EQ(CheckResumes<Record>(
                [&] {
                  return From(MakeTFRecordSource(Store(), paths))
                      .Cache()
                      .Shuffle({.buffer_size = 6, .seed = 3})
                      .Repeat(3);
                },
                24),
            72u);
  EXPECT_GT(CheckResumes<Example>([&] {
              return FromVector(testing::MakeExamples(20))
                  .Cache()
                  .Repeat(3)
                  .Echo({.factor = 2.0, .seed = 1})
                  .Shuffle({.buffer_size = 9, .seed = 2});
            }),
            100u);
}

TEST(CheckpointStagesTest, CacheRestartedBeforeItsInputEnded) {
  // Take ends an epoch before the cache's input ends: the next epoch replays
  // what is cached, then reads on.
  EXPECT_EQ(CheckResumes<int64_t>([] { return FromRange(0, 20).Cache().Take(7).Repeat(4); }), 28u);
}

TEST(CheckpointStagesTest, PaddedBatchWithBatchEcho) {
  EXPECT_GT(CheckResumes<Batch>([] {
              return FromVector(Sequences(40))
                  .Repeat(2)
                  .Echo({.factor = 1.5, .seed = 7})
                  .Shuffle({.buffer_size = 10, .seed = 8})
                  .PaddedBatch({.batch_size = 4})
                  .Echo({.factor = 2.5, .seed = 9, .name = "batch_echo"});
            }),
            40u);
}

TEST(CheckpointStagesTest, PaddedBatchRepeats) {
  auto make = [] {
    return FromVector(Sequences(10))
        .PaddedBatch({.batch_size = 4, .padding_values = {-1}})
        .Repeat(2);
  };
  Pipeline<Batch> p = make();
  EXPECT_EQ(Rest(p).size(), 6u);  // 4 + 4 + 2 rows, twice
  EXPECT_EQ(CheckResumes<Batch>(make), 6u);
}

TEST(CheckpointStagesTest, ShuffleOfPaddedBatchesFailsNamingIt) {
  // More batches than a PaddedBatch keeps references to (as a Batch).
  Pipeline<Batch> p = FromVector(Sequences(100))
                          .PaddedBatch({.batch_size = 2})
                          .Shuffle({.buffer_size = 20, .name = "batch_shuffle"});
  ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> s = p.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("padded_batch"), std::string::npos) << s.status();
}

TEST(CheckpointStagesTest, BadStatesOfTheseStagesAreErrorsNeverCrashes) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 6);
  auto make = [&] {
    return InterleavedFiles(paths, 2, 2)
        .Zip(From(MakeTFRecordSource(Store(), paths)).Cache().Shuffle({.buffer_size = 4}));
  };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 7);
  ASSERT_TRUE(state.ok()) << state.status();
  // Every cut is DATA_LOSS (the checksum).
  for (size_t cut = 0; cut < state->size(); cut += 3) {
    Pipeline<RecordPair> q = make();
    absl::Status s = q.RestoreState(state->substr(0, cut));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut << " " << s;
  }
  // A flipped bit with a valid checksum: an error or the same elements'
  // count at most, never a crash or a pipeline that spins.
  CheckFlippedStatesEnd<RecordPair>(make, *state, 200, 3);
}

// --- adaptive and auto echo ---

// Adaptive echo's decisions depend on timing; replayed, they do not: a state
// saved while replaying (or live, then replayed) continues with the same
// decisions after the restore (the decisions taken are part of the state).
TEST(CheckpointStagesTest, AdaptiveEchoReplayedDecisionsResume) {
  const std::string decisions = "FRFFRRFRFFFRFRRFFRF";
  auto make = [&] {
    return FromVector(testing::MakeExamples(40))
        .Repeat(2)
        .AdaptiveEcho({.max_factor = 2.5,
                       .pool_size = 3,
                       .seed = 3,
                       .replay_decisions = decisions + "FFRFRRFFRFR" + decisions})
        .Shuffle({.buffer_size = 6, .seed = 4});
  };
  Pipeline<Example> p = make();
  const std::vector<std::string> all = Rest(p);
  EXPECT_GT(all.size(), 80u);
  EXPECT_EQ(CheckResumes<Example>(make, 24), all.size());
}

TEST(CheckpointStagesTest, AdaptiveEchoOfBatchesResumes) {
  auto make = [] {
    return FromVector(testing::MakeExamples(50))
        .Batch({.batch_size = 4})
        .AdaptiveEcho(
            {.max_factor = 3, .pool_size = 1, .seed = 1, .replay_decisions = "FRRFRFFRR"});
  };
  EXPECT_EQ(CheckResumes<Batch>(make), 18u);  // 13 batches, 5 repeats
}

// Auto echo: once its factor is fixed, the continuation is the same.
TEST(CheckpointStagesTest, AutoEchoResumesAfterItsFactorIsFixed) {
  auto make = [] {
    auto ticks = std::make_shared<int64_t>(0);
    AutoEchoOptions options;
    options.adaptive = {.max_factor = 3.5,
                        .pool_size = 4,
                        .seed = 5,
                        .rate_window = 4,
                        .replay_decisions = "FRFFRFRRFF",
                        .clock = [ticks] { return *ticks += 1000; }};
    options.warmup = 12;
    return FromVector(testing::MakeExamples(60))
        .AutoEcho(std::move(options))
        .Shuffle({.buffer_size = 8, .seed = 6});
  };
  EXPECT_GT(CheckResumes<Example>(make, 16, 1, /*min_position=*/20), 60u);
}

TEST(CheckpointStagesTest, BadPoolInAStateIsDataLoss) {
  auto make = [] {
    return FromRange(0, 30).AdaptiveEcho(
        {.max_factor = 2, .pool_size = 2, .seed = 1, .replay_decisions = "FRF"});
  };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 3);
  ASSERT_TRUE(state.ok()) << state.status();
  CheckFlippedStatesEnd<int64_t>(make, *state);
}

// A vector source moves its elements out (it copies them only under a
// Repeat). Behind a Prefetch, the elements taken after the Prefetch's last
// snapshot are pulled from the source again at restore, and an echo's or a
// shuffle's buffered element may be one of them: read again, it must be the
// element, not what is left of it after the move.
TEST(CheckpointStagesTest, VectorSourceBehindAPrefetchRereadsWhatItPulledAgain) {
  auto make = [] {
    return FromVector(testing::MakeExamples(40, 8))
        .Prefetch({.depth = 4})
        .Echo({.factor = 2, .seed = 1})
        .Shuffle({.buffer_size = 6, .seed = 2});
  };
  EXPECT_EQ(CheckResumes<Example>(make, 12), 80u);
  auto batches = [&make] { return make().Batch({.batch_size = 4}); };
  EXPECT_EQ(CheckResumes<Batch>(batches, 12), 20u);
}

// --- the fuzz target's pipelines (tests/fuzz/state_stages_target.h) ---

// Their states saved at a few positions resume; cut or bit-flipped (with a
// valid checksum) they end, never crash or spin; and the committed corpus
// (tests/fuzz/corpus/state/stages-*) replays. DATAECHO_WRITE_STATE_CORPUS=dir
// writes the corpus inputs there. (The auto placement's continuation is
// equal only up to its next decision, which timing may move, and the
// adaptive placement's after the decisions its journal carries: their
// resumes are tested in checkpoint_auto_placement_test.cc.)
template <typename T>
void FuzzPipelineStates(const std::function<Pipeline<T>()>& make, const std::string& name,
                        bool check_resumes = true) {
  if (check_resumes) EXPECT_GT(CheckResumes<T>(make, 8), 0u) << name;
  const char* corpus = std::getenv("DATAECHO_WRITE_STATE_CORPUS");
  std::mt19937 rng(11);
  for (size_t k : {size_t{0}, size_t{3}, size_t{9}}) {
    Pipeline<T> p = make();
    for (size_t i = 0; i < k; ++i) ASSERT_TRUE(p.Next().ok());
    absl::StatusOr<std::string> state = p.SaveState();
    ASSERT_TRUE(state.ok()) << name << " " << state.status();
    if (corpus != nullptr) {
      testing::WriteFileOrDie(fmt::format("{}/stages-{}-{}", corpus, name, k), *state);
    }
    for (int trial = 0; trial < 60; ++trial) {
      std::string body = state->substr(0, state->size() - 4);
      if (trial % 3 == 0) {
        body.resize(std::uniform_int_distribution<size_t>(0, body.size())(rng));
      } else {
        const size_t at = std::uniform_int_distribution<size_t>(4, body.size() - 1)(rng);
        body[at] = static_cast<char>(body[at] ^ (1 << (trial % 8)));
      }
      fuzz::StateStagesTarget(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    }
  }
}

TEST(CheckpointStagesTest, FuzzTargetPipelines) {
  FuzzPipelineStates<Batch>(fuzz::StateFuzzPaddedBatches, "padded");
  FuzzPipelineStates<std::pair<int64_t, int64_t>>(fuzz::StateFuzzPairs, "pairs");
  FuzzPipelineStates<Example>(fuzz::StateFuzzAutoEcho, "auto");
  FuzzPipelineStates<Example>(fuzz::StateFuzzInterleavedEcho, "interleaved-echo");
  FuzzPipelineStates<Batch>(fuzz::StateFuzzAutoPlacement, "auto-placement",
                            /*check_resumes=*/false);
  FuzzPipelineStates<Batch>(fuzz::StateFuzzAdaptivePlacement, "adaptive-placement",
                            /*check_resumes=*/false);
  int replayed = 0;
  const std::string dir = std::string(DATAECHO_FUZZ_CORPUS_DIR) + "/state";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fuzz::StateStagesTarget(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++replayed;
  }
  EXPECT_GT(replayed, 0);
}

}  // namespace
}  // namespace dataecho
