// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The README pipeline saves and restores exactly: TFRecord files of
// Fashion-MNIST-like images -> Map(DecodeImageRecord, parallel) -> Prefetch ->
// Echo -> Map(crop and flip, inline) -> Shuffle -> Batch(fp16) -> Prefetch,
// and its variants (no Shuffle, batch echo, epochs, Map inline, parallel and
// autotuned, Prefetch at record, example and batch level). Each is saved at
// random positions, destroyed, rebuilt, restored and compared element by
// element with an uninterrupted run; the states stay small (read-ahead and
// in-flight work are not stored).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "dataecho/augment.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/resume_check.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::CheckResumes;
using ::dataecho::testing::Key;
using ::dataecho::testing::TempDir;

absl::StatusOr<Example> RandomCropAndFlip(Example ex) {
  return testing::CropAndFlip(std::move(ex), 28, 2);
}

Pipeline<Record> Records(const std::vector<std::string>& paths) {
  return From(MakeTFRecordSource(OpenObjectStore(), paths));
}

BatchOptions Fp16(int64_t rows) {
  return {.batch_size = rows,
          .cast = DType::kFloat16,
          .scale = 1.0f / 255,
          .mean = {0.286f},
          .stddev = {0.353f}};
}

class CheckpointPipelineTest : public ::testing::Test {
 protected:
  TempDir dir_;
  const std::vector<std::string> paths_ = testing::WriteImageShards(dir_, 3, 40, 28);
};

// The README pipeline, scaled down.
TEST_F(CheckpointPipelineTest, ReadmePipeline) {
  CheckResumes<Batch>([&] {
    return Records(paths_)
        .Map(DecodeImageRecord, {.parallelism = 4})
        .Prefetch({.depth = 256})
        .Echo({.factor = 2.0, .seed = 1})
        .Map(RandomCropAndFlip)
        .Shuffle({.buffer_size = 50, .seed = 2})
        .Batch(Fp16(8))
        .Prefetch({.depth = 2});
  });
}

TEST_F(CheckpointPipelineTest, NoShuffleFractionalEchoSmallQueues) {
  size_t largest = 0;
  CheckResumes<Batch>(
      [&] {
        return Records(paths_)
            .Map(DecodeImageRecord, {.parallelism = 2, .buffer = 3})
            .Prefetch({.depth = 4})
            .Echo({.factor = 1.5, .seed = 3})
            .Map(RandomCropAndFlip)
            .Batch(Fp16(8))
            .Prefetch({.depth = 2});
      },
      20, 1, 0, &largest);
  EXPECT_LE(largest, 4096u);
}

TEST_F(CheckpointPipelineTest, BatchEchoAfterBatch) {
  CheckResumes<Batch>([&] {
    return Records(paths_)
        .Map(DecodeImageRecord, {.parallelism = 3})
        .Prefetch({.depth = 16})
        .Map(RandomCropAndFlip)
        .Shuffle({.buffer_size = 20, .seed = 4})
        .Batch(Fp16(8))
        .Echo({.factor = 2.5, .seed = 5, .name = "batch_echo"})
        .Prefetch({.depth = 2});
  });
}

// A batch Echo behind a Prefetch of batches: the Batch references one of
// the last batches it emitted, not only the last.
TEST_F(CheckpointPipelineTest, BatchEchoBehindPrefetchOfBatches) {
  CheckResumes<Batch>([&] {
    return Records(paths_)
        .Map(DecodeImageRecord, {.parallelism = 2})
        .Map(RandomCropAndFlip)
        .Batch(Fp16(4))
        .Prefetch({.depth = 8})
        .Echo({.factor = 2.0, .seed = 17, .name = "batch_echo"});
  });
}

// Epochs: a Repeat below the parallel stages (they restart every epoch) and
// one above them.
TEST_F(CheckpointPipelineTest, RepeatBelowParallelMapAndPrefetch) {
  CheckResumes<Batch>([&] {
    return Records(paths_)
        .Repeat(2)
        .Map(DecodeImageRecord, {.parallelism = 2})
        .Prefetch({.depth = 8})
        .Echo({.factor = 2.0, .seed = 6})
        .Map(RandomCropAndFlip)
        .Shuffle({.buffer_size = 30, .seed = 7})
        .Batch(Fp16(8))
        .Prefetch({.depth = 2});
  });
}

TEST_F(CheckpointPipelineTest, RepeatAboveParallelMapAndPrefetch) {
  CheckResumes<Example>([&] {
    return Records(paths_)
        .Map(DecodeImageRecord, {.parallelism = 2})
        .Prefetch({.depth = 8})
        .Filter([](const Example& e) { return e.label != 3; })
        .Repeat(2)
        .Echo({.factor = 1.5, .seed = 8})
        .Map(RandomCropAndFlip)
        .Shuffle({.buffer_size = 25, .seed = 9});
  });
}

// Map inline and autotuned; Prefetch at the record level (a Shuffle of
// records before the decode Map references the records through it).
TEST_F(CheckpointPipelineTest, InlineDecodeAndRecordLevelPrefetch) {
  CheckResumes<Batch>([&] {
    return Records(paths_)
        .Prefetch({.depth = 8})
        .Echo({.factor = 2.0, .seed = 10})
        .Shuffle({.buffer_size = 20, .seed = 11})
        .Map(DecodeImageRecord)
        .Map(RandomCropAndFlip)
        .Shuffle({.buffer_size = 10, .seed = 12})
        .Batch(Fp16(8));
  });
}

TEST_F(CheckpointPipelineTest, AutotunedMap) {
  CheckResumes<Example>([&] {
    return Records(paths_)
        .Map(DecodeImageRecord, {.parallelism = kAutotune})
        .Prefetch({.depth = 16})
        .Echo({.factor = 2.0, .seed = 13})
        .Shuffle({.buffer_size = 40, .seed = 14});
  });
}

// Records through Map<Record, Record> and Prefetch(1): references pass through.
TEST_F(CheckpointPipelineTest, RecordMapAndTinyPrefetch) {
  CheckResumes<Record>([&] {
    return Records(paths_)
        .Map([](Record r) { return r; }, {.parallelism = 2})
        .Prefetch({.depth = 1})
        .Echo({.factor = 2.0, .seed = 15})
        .Shuffle({.buffer_size = 15, .seed = 16});
  });
}

// Filter and Take restart with their input now (.Filter(p).Repeat()).
TEST_F(CheckpointPipelineTest, FilterRepeats) {
  CheckResumes<int64_t>([] {
    return FromRange(0, 30).Filter([](int64_t v) { return v % 3 != 0; }).Take(15).Repeat(3);
  });
}

TEST_F(CheckpointPipelineTest, UnorderedMapCannotBeSaved) {
  Pipeline<Example> p = Records(paths_).Map(
      DecodeImageRecord, {.parallelism = 2, .deterministic = false, .name = "decode"});
  ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> s = p.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("decode"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("completion order"), std::string::npos) << s.status();
}

// A Map between types it cannot reference names itself when a later stage
// must reference its elements.
TEST_F(CheckpointPipelineTest, MapOfOtherTypesCannotBeReferenced) {
  Pipeline<int64_t> p =
      FromVector(testing::MakeExamples(10))
          .Map([](Example e) { return static_cast<int64_t>(e.source_index); }, {.name = "to_int"})
          .Shuffle({.buffer_size = 4});
  ASSERT_TRUE(p.Next().ok());
  // int64 elements are their own references: this one works.
  EXPECT_TRUE(p.SaveState().ok());
  Pipeline<Example> q = FromRange(0, 10)
                            .Map([](int64_t v) { return testing::MakeExample(v); }, {.name = "mk"})
                            .Shuffle({.buffer_size = 4});
  ASSERT_TRUE(q.Next().ok());
  absl::StatusOr<std::string> s = q.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("mk"), std::string::npos) << s.status();
}

// Destroying a pipeline right after SaveState(), its threads mid-flight,
// never hangs.
TEST_F(CheckpointPipelineTest, DestroyRightAfterSave) {
  for (int steps = 0; steps < 12; ++steps) {
    Pipeline<Batch> p = Records(paths_)
                            .Map(DecodeImageRecord, {.parallelism = 4})
                            .Prefetch({.depth = 64})
                            .Echo({.factor = 2.0, .seed = 1})
                            .Map(RandomCropAndFlip)
                            .Shuffle({.buffer_size = 30, .seed = 2})
                            .Batch(Fp16(4))
                            .Prefetch({.depth = 2});
    for (int i = 0; i < steps; ++i) ASSERT_TRUE(p.Next().ok());
    ASSERT_TRUE(p.SaveState().ok());
  }
}

Pipeline<Batch> SmallReadme(const std::vector<std::string>& paths, std::string map_name = "map") {
  return Records(paths)
      .Map(DecodeImageRecord, {.parallelism = 2, .name = std::move(map_name)})
      .Prefetch({.depth = 8})
      .Echo({.factor = 2.0, .seed = 1})
      .Map(RandomCropAndFlip, {.name = "augment"})
      .Shuffle({.buffer_size = 12, .seed = 2})
      .Batch(Fp16(4))
      .Prefetch({.depth = 2});
}

// Bad states of the README pipeline: cut or flipped (DATA_LOSS), of another
// shape (INVALID_ARGUMENT naming the stage), or over files that changed
// (DATA_LOSS naming the file).
TEST_F(CheckpointPipelineTest, BadStatesAreClearErrors) {
  absl::StatusOr<std::string> state;
  {
    Pipeline<Batch> p = SmallReadme(paths_);
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(p.Next().ok());
    state = p.SaveState();
    ASSERT_TRUE(state.ok()) << state.status();
  }
  for (size_t n = 0; n < state->size(); n += 7) {
    Pipeline<Batch> p = SmallReadme(paths_);
    EXPECT_EQ(p.RestoreState(state->substr(0, n)).code(), absl::StatusCode::kDataLoss) << n;
  }
  for (size_t i = 0; i < state->size(); i += 5) {
    std::string bad = *state;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    Pipeline<Batch> p = SmallReadme(paths_);
    EXPECT_EQ(p.RestoreState(bad).code(), absl::StatusCode::kDataLoss) << i;
  }
  Pipeline<Batch> other = SmallReadme(paths_, "decode");
  absl::Status s = other.RestoreState(*state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'decode'"), std::string::npos) << s;
  // The files rewritten with other images of the same sizes.
  for (size_t f = 0; f < paths_.size(); ++f) {
    std::string bytes;
    for (int i = 0; i < 40; ++i) {
      MutableBuffer pixels(28 * 28);
      for (int p = 0; p < 28 * 28; ++p) pixels.data()[p] = static_cast<uint8_t>(p + i + 1);
      auto image = Tensor::Make(DType::kUInt8, {28, 28, 1}, std::move(pixels).Freeze());
      AppendTFRecord(&bytes, *EncodeImageRecord(*image, i % 10));
    }
    testing::WriteFileOrDie(paths_[f], bytes);
  }
  Pipeline<Batch> over_changed = SmallReadme(paths_);
  s = over_changed.RestoreState(*state);
  // (Named by the record source if the state references a changed record, by
  // the Prefetch or Map if only the elements they make again changed.)
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("other contents than when the state was saved"), std::string::npos)
      << s;
}

// A state saved as a Cord (SaveStateCord) restores exactly as the string
// one: from the Cord, from its flattened bytes, and from SaveState()'s string
// taken at the same step, the rest of the run is the run's own; the Cord's
// flattened bytes are a whole state (magic, checksum). Cut or flipped, it is
// DATA_LOSS.
TEST_F(CheckpointPipelineTest, CordStateRestoresAsTheString) {
  using ::dataecho::testing::Rest;
  for (int steps : {0, 3, 11, 25}) {
    Pipeline<Batch> p = SmallReadme(paths_);
    for (int i = 0; i < steps; ++i) ASSERT_TRUE(p.Next().ok());
    absl::StatusOr<absl::Cord> cord = p.SaveStateCord();
    ASSERT_TRUE(cord.ok()) << cord.status();
    absl::StatusOr<std::string> string = p.SaveState();
    ASSERT_TRUE(string.ok()) << string.status();
    const std::string flat(*cord);
    EXPECT_EQ(flat.substr(0, 4), "DEST");
    const std::vector<std::string> want = Rest(p);
    ASSERT_FALSE(want.empty());

    Pipeline<Batch> from_cord = SmallReadme(paths_);
    ASSERT_TRUE(from_cord.RestoreState(*cord).ok()) << steps;
    EXPECT_EQ(Rest(from_cord), want) << steps;
    Pipeline<Batch> from_flat = SmallReadme(paths_);
    ASSERT_TRUE(from_flat.RestoreState(flat).ok()) << steps;
    EXPECT_EQ(Rest(from_flat), want) << steps;
    Pipeline<Batch> from_string = SmallReadme(paths_);
    ASSERT_TRUE(from_string.RestoreState(*string).ok()) << steps;
    EXPECT_EQ(Rest(from_string), want) << steps;
  }
  Pipeline<Batch> p = SmallReadme(paths_);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<absl::Cord> cord = p.SaveStateCord();
  ASSERT_TRUE(cord.ok()) << cord.status();
  for (size_t n = 0; n < cord->size(); n += 7) {
    Pipeline<Batch> q = SmallReadme(paths_);
    EXPECT_EQ(q.RestoreState(cord->Subcord(0, n)).code(), absl::StatusCode::kDataLoss) << n;
  }
  const std::string flat(*cord);
  for (size_t i = 0; i < flat.size(); i += 5) {
    absl::Cord bad = cord->Subcord(0, i);
    bad.Append(std::string(1, static_cast<char>(flat[i] ^ 0x10)));
    bad.Append(cord->Subcord(i + 1, flat.size() - i - 1));
    Pipeline<Batch> q = SmallReadme(paths_);
    EXPECT_EQ(q.RestoreState(bad).code(), absl::StatusCode::kDataLoss) << i;
  }
}

// State sizes, deterministic: with Shuffle(10,000) at most 16 bytes per
// buffered element; without a shuffle buffer at most 4 KB.
TEST(CheckpointPipelineSizeTest, ReadmePipelineStateSizes) {
  TempDir dir;
  const std::vector<std::string> paths = testing::WriteImageShards(dir, 4, 3000, 28);
  auto readme = [&](bool shuffle) {
    auto examples = Records(paths)
                        .Map(DecodeImageRecord, {.parallelism = 4})
                        .Prefetch({.depth = 256})
                        .Echo({.factor = 2.0, .seed = 1})
                        .Map(RandomCropAndFlip);
    if (shuffle) examples = std::move(examples).Shuffle({.buffer_size = 10000, .seed = 2});
    return std::move(examples).Batch(Fp16(256)).Prefetch({.depth = 2});
  };
  for (bool shuffle : {true, false}) {
    Pipeline<Batch> p = readme(shuffle);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(p.Next().ok());
    absl::StatusOr<std::string> state = p.SaveState();
    ASSERT_TRUE(state.ok()) << state.status();
    if (shuffle) {
      EXPECT_LE(static_cast<double>(state->size()) / 10000, 16.0) << state->size();
    } else {
      EXPECT_LE(state->size(), 4096u);
    }
    // And it restores: the next batches are the same.
    Pipeline<Batch> q = readme(shuffle);
    ASSERT_TRUE(q.RestoreState(*state).ok());
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<std::optional<Batch>> a = p.Next(), b = q.Next();
      ASSERT_TRUE(a.ok() && b.ok() && a->has_value() && b->has_value());
      EXPECT_EQ(Key(**a), Key(**b)) << i;
    }
  }
}

}  // namespace
}  // namespace dataecho
