// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// A Shuffle or Echo after an Interleave saves and restores: the elements it
// holds are referenced through the interleaved pipelines that made them
// (interleave.h, "References"), open or ended; a restored pipeline yields
// exactly the rest of an uninterrupted run. Flipped bits in such a state end,
// never crash; a Map between the Interleave and the Shuffle fails naming the
// interleave; the handles the Interleave keeps do not keep dropped elements.
// (The Interleave's own state: checkpoint_stages_test.cc.)
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/checkpoint_check.h"
#include "support/examples.h"
#include "support/resume_check.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using testing::CheckFlippedStatesEnd;
using testing::CheckResumes;
using testing::InterleavedFiles;
using testing::Store;
using testing::WriteTFRecordFiles;

TEST(CheckpointInterleaveTest, InterleaveEchoShuffleResumes) {
  // The Echo's item and the Shuffle's buffer are referenced through the
  // pipelines that made them: open ones, and ones that ended (made again by
  // fn at the save and at the restore).
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 5, 7);
  EXPECT_EQ(CheckResumes<Record>([&] {
              return InterleavedFiles(paths, 2, 2)
                  .Echo({.factor = 2.0, .seed = 3})
                  .Shuffle({.buffer_size = 6, .seed = 4});
            }),
            70u);
  // Under a Repeat, with fractional echo and a buffer that outlives pipelines.
  EXPECT_GT(CheckResumes<Record>(
                [&] {
                  return InterleavedFiles(paths, 3, 1)
                      .Repeat(2)
                      .Echo({.factor = 1.5, .seed = 5})
                      .Shuffle({.buffer_size = 20, .seed = 6});
                },
                20, 2),
            70u);
}

TEST(CheckpointInterleaveTest, InterleaveOfExamplePipelinesEchoShuffleResumes) {
  // Pipelines of in-memory examples whose source indices repeat from one
  // pipeline to the next: each element is read again by its own pipeline.
  auto make = [] {
    return FromRange(0, 4)
        .Interleave(
            [](int64_t i) {
              // (i & 3: a corrupted state's element opens a small pipeline too.)
              std::vector<Example> v = testing::MakeExamples(3 + (i & 3));
              for (Example& e : v) e.label = i;
              return FromVector(std::move(v));
            },
            {.cycle_length = 2, .block_length = 2})
        .Echo({.factor = 2.0, .seed = 7})
        .Shuffle({.buffer_size = 5, .seed = 8});
  };
  EXPECT_EQ(CheckResumes<Example>(make), 36u);
  // Flipped bits in such a state (with a valid checksum): an error or an end,
  // never a crash or a pipeline that spins.
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 9);
  ASSERT_TRUE(state.ok()) << state.status();
  CheckFlippedStatesEnd<Example>(make, *state);
}

TEST(CheckpointInterleaveTest, InterleaveLetsGoOfElementsNoStageHolds) {
  // The handles it keeps to trace elements to their pipelines do not keep
  // the payloads of elements nobody holds any more: of 1,000 examples pulled
  // and dropped, all but a few dozen are freed while the pipeline runs.
  struct Payload {
    explicit Payload(std::atomic<int>* f) : freed(f) {}
    ~Payload() { freed->fetch_add(1); }
    std::atomic<int>* freed;
    uint8_t bytes[8] = {};
  };
  std::atomic<int> freed{0};
  Pipeline<Example> p = FromRange(0, 4).Interleave(
      [&freed](int64_t i) {
        std::vector<Example> v;
        for (int64_t j = 0; j < 250; ++j) {
          auto owner = std::make_shared<Payload>(&freed);
          Example e;
          e.components.push_back(
              *Tensor::Make(DType::kUInt8, {8}, Buffer::Wrap(owner, owner->bytes, 8)));
          e.source_index = static_cast<uint64_t>(i * 1000 + j);
          v.push_back(std::move(e));
        }
        return FromVector(std::move(v));
      },
      {.cycle_length = 2});
  int n = 0;
  while (true) {
    absl::StatusOr<std::optional<Example>> next = p.Next();
    ASSERT_TRUE(next.ok()) << next.status();
    if (!next->has_value()) break;
    ++n;
  }
  EXPECT_EQ(n, 1000);
  EXPECT_GE(freed.load(), 900);
  EXPECT_LT(freed.load(), 1000);  // (the last ones are still held)
}

TEST(CheckpointInterleaveTest, ShuffleOfMapAfterInterleaveFailsNamingIt) {
  // A Map after the Interleave makes new elements, which the Interleave
  // cannot trace to its pipelines: the save fails naming it.
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 4);
  Pipeline<Record> p = InterleavedFiles(paths, 2, 1)
                           .Map([](Record r) {
                             r.data = Buffer::CopyOf(r.data.view());
                             return r;
                           })
                           .Shuffle({.buffer_size = 3, .seed = 1});
  ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> s = p.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("interleave"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace dataecho
