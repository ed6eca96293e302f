// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Tests of the trainers' checkpoint files (examples/trainer/checkpoint_file.h)
// and state layout (train_state.h) on real files: the round trip, the last two
// kept, a torn, bit-flipped or foreign newest file skipped for the one before
// with a warning, every file damaged is an error, a missing or empty
// directory means "start fresh", and a payload of another layout is DATA_LOSS.
#include "trainer/checkpoint_file.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/temp_files.h"
#include "trainer/data.h"
#include "trainer/train_state.h"

namespace trainer {
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

absl::StatusOr<std::optional<CheckpointFile>> Read(const std::string& dir,
                                                   std::vector<std::string>* warnings) {
  return ReadNewestCheckpoint(dir, [&](std::string_view w) { warnings->emplace_back(w); });
}

TEST(CheckpointFileTest, RoundTripKeepsTheLastTwo) {
  TempDir tmp;
  const std::string dir = tmp.File("ck/sub");  // created on the first write
  for (int64_t step : {5, 10, 15}) {
    ASSERT_TRUE(WriteCheckpointFile(dir, step, "payload " + std::to_string(step)).ok());
  }
  EXPECT_EQ(Names(dir),
            (std::vector<std::string>{"ckpt-000000000010.dtc", "ckpt-000000000015.dtc"}));
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<CheckpointFile>> c = Read(dir, &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->step, 15);
  EXPECT_EQ((*c)->payload, "payload 15");
  EXPECT_EQ((*c)->path, CheckpointPath(dir, 15));
  EXPECT_TRUE(warnings.empty());
}

// A payload held as a Cord (a pipeline's SaveStateCord() after the trainer's
// own values) is written chunk by chunk into the same file as its flattened
// bytes, and loads back: the pipeline's state in it restores the pipeline.
TEST(CheckpointFileTest, CordPayloadWritesTheSameFile) {
  TempDir tmp;
  auto build = [] {
    return dataecho::FromRange(0, 5000)
        .Shuffle({.buffer_size = 1000, .seed = 3})
        .Prefetch({.depth = 4});
  };
  auto p = build();
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<absl::Cord> state = p.SaveStateCord();
  ASSERT_TRUE(state.ok()) << state.status();
  StateWriter w;
  w.U64(7);
  w.U64(state->size());  // as w.String() writes it
  absl::Cord payload(w.Release());
  payload.Append(*state);
  ASSERT_GT(std::distance(payload.Chunks().begin(), payload.Chunks().end()), 1);
  const std::string flat(payload);
  ASSERT_TRUE(WriteCheckpointFile(tmp.File("cord"), 12, payload).ok());
  ASSERT_TRUE(WriteCheckpointFile(tmp.File("flat"), 12, flat).ok());
  EXPECT_EQ(ReadFileOrDie(CheckpointPath(tmp.File("cord"), 12)),
            ReadFileOrDie(CheckpointPath(tmp.File("flat"), 12)));
  EXPECT_EQ(ReadFileOrDie(CheckpointPath(tmp.File("cord"), 12)), EncodeCheckpointFile(12, flat));

  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<CheckpointFile>> c = Read(tmp.File("cord"), &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->payload, flat);
  StateReader r((*c)->payload, (*c)->path);
  EXPECT_EQ(r.U64(), 7u);
  const std::string pipeline_state = r.String();
  ASSERT_TRUE(r.Finish().ok());
  auto q = build();
  ASSERT_TRUE(q.RestoreState(pipeline_state).ok());
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<std::optional<int64_t>> a = p.Next();
    absl::StatusOr<std::optional<int64_t>> b = q.Next();
    ASSERT_TRUE(a.ok() && b.ok() && a->has_value() && b->has_value());
    EXPECT_EQ(**a, **b) << i;
  }
}

TEST(CheckpointFileTest, MissingOrEmptyDirectoryMeansStartFresh) {
  TempDir tmp;
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<CheckpointFile>> missing = Read(tmp.File("none"), &warnings);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  // Other files and a killed writer's temporary file are not checkpoints.
  WriteFileOrDie(tmp.File("notes.txt"), "x");
  WriteFileOrDie(tmp.File(".ckpt-000000000020.tmp-123"), "half");
  absl::StatusOr<std::optional<CheckpointFile>> empty = Read(tmp.path(), &warnings);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  EXPECT_TRUE(warnings.empty());
  // The next write removes the temporary file.
  ASSERT_TRUE(WriteCheckpointFile(tmp.path(), 20, "p").ok());
  EXPECT_EQ(Names(tmp.path()), (std::vector<std::string>{"ckpt-000000000020.dtc", "notes.txt"}));
}

// Each way a newest file can be damaged: the one before is used, with a
// warning naming the damaged file.
TEST(CheckpointFileTest, DamagedNewestFallsBackToThePreviousOne) {
  const std::string good = EncodeCheckpointFile(8, "newest payload");
  struct Case {
    std::string name, bytes, reason;
  };
  std::string flipped = good;
  flipped[30] = static_cast<char>(flipped[30] ^ 0x10);
  std::string other_version = good;
  other_version[4] = 2;
  const std::vector<Case> cases = {
      {"torn", good.substr(0, good.size() - 3), "torn write"},
      {"header only", good.substr(0, 10), "shorter than a header"},
      {"empty", "", "shorter than a header"},
      {"bit flip", flipped, "CRC-32C"},
      {"version", other_version, "format version 2"},
      {"magic", "XXXX" + good.substr(4), "bad magic"},
      {"other step", EncodeCheckpointFile(9, "p"), "holds step 9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir tmp;
    ASSERT_TRUE(WriteCheckpointFile(tmp.path(), 4, "previous payload").ok());
    WriteFileOrDie(CheckpointPath(tmp.path(), 8), c.bytes);
    std::vector<std::string> warnings;
    absl::StatusOr<std::optional<CheckpointFile>> r = Read(tmp.path(), &warnings);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->step, 4);
    EXPECT_EQ((*r)->payload, "previous payload");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(CheckpointPath(tmp.path(), 8)), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(c.reason), std::string::npos) << warnings[0];
  }
}

// After a resume from the checkpoint before a damaged one, the next write
// keeps two good checkpoints: the damaged later one goes.
TEST(CheckpointFileTest, WritingAfterAFallbackRemovesTheDamagedLaterOne) {
  TempDir tmp;
  ASSERT_TRUE(WriteCheckpointFile(tmp.path(), 4, "a").ok());
  WriteFileOrDie(CheckpointPath(tmp.path(), 8), "damaged");
  ASSERT_TRUE(WriteCheckpointFile(tmp.path(), 6, "b").ok());
  EXPECT_EQ(Names(tmp.path()),
            (std::vector<std::string>{"ckpt-000000000004.dtc", "ckpt-000000000006.dtc"}));
}

TEST(CheckpointFileTest, EveryCheckpointDamagedIsDataLoss) {
  TempDir tmp;
  ASSERT_TRUE(WriteCheckpointFile(tmp.path(), 1, "a").ok());
  ASSERT_TRUE(WriteCheckpointFile(tmp.path(), 2, "b").ok());
  for (int64_t step : {1, 2}) {
    std::string bytes = ReadFileOrDie(CheckpointPath(tmp.path(), step));
    bytes.back() = static_cast<char>(bytes.back() ^ 1);
    WriteFileOrDie(CheckpointPath(tmp.path(), step), bytes);
  }
  std::vector<std::string> warnings;
  absl::StatusOr<std::optional<CheckpointFile>> r = Read(tmp.path(), &warnings);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("no complete checkpoint in " + tmp.path()), std::string::npos)
      << r.status();
  EXPECT_EQ(warnings.size(), 2u);
}

TEST(CheckpointFileTest, UnwritableDirectoryIsUnavailableNamingIt) {
  TempDir tmp;
  WriteFileOrDie(tmp.File("file"), "x");
  absl::Status s = WriteCheckpointFile(tmp.File("file/sub"), 1, "p");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(tmp.File("file/sub")), std::string::npos) << s;
}

TEST(TrainStateTest, ModelOptimizerAndLoopRoundTrip) {
  Mlp model({6, 5, 3}, 1);
  Sgd sgd(model, {.learning_rate = 0.1f, .momentum = 0.9f});
  const float x[12] = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
  const int64_t labels[2] = {0, 2};
  model.ComputeGradients(x, labels, 2);
  sgd.Step(model);
  TrainResult result;
  result.steps_total = 7;
  result.fresh_examples_total = 700;
  result.examples_total = 1400;
  result.data_digest = 0x1234567890abcdefull;
  result.fresh_examples_to_target = 600;
  result.curve = {{300, 0.5}, {600, 0.75}};
  LoopState loop{.next_eval = 900, .accuracy = 0.75, .train_seconds = 2.5};
  TrainOptions options;
  StateWriter w;
  w.String(OptionsFingerprint(options));
  SaveLoop(result, loop, w);
  SaveModel(model, sgd, w);

  Mlp other({6, 5, 3}, 2);
  Sgd other_sgd(other, {.learning_rate = 0.1f, .momentum = 0.9f});
  TrainResult r2;
  LoopState l2;
  StateReader r(w.bytes(), "test");
  ASSERT_TRUE(CheckFingerprint(r, options, "test").ok());
  RestoreLoop(r, r2, l2);
  RestoreModel(r, other, other_sgd);
  ASSERT_TRUE(r.Finish().ok()) << r.status();
  EXPECT_EQ(r2.steps_total, 7);
  EXPECT_EQ(r2.data_digest, result.data_digest);
  EXPECT_EQ(r2.fresh_examples_to_target, 600);
  EXPECT_FALSE(r2.steps_to_target.has_value());
  ASSERT_EQ(r2.curve.size(), 2u);
  EXPECT_EQ(r2.curve[1].test_accuracy, 0.75);
  EXPECT_EQ(l2.next_eval, 900);
  for (size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(other.layers()[l].weights, model.layers()[l].weights);
    EXPECT_EQ(other.layers()[l].bias, model.layers()[l].bias);
    EXPECT_EQ(other_sgd.velocity_weights()[l], sgd.velocity_weights()[l]);
    EXPECT_EQ(other_sgd.velocity_bias()[l], sgd.velocity_bias()[l]);
  }
  // The same step from both: the momentum came along.
  model.ComputeGradients(x, labels, 2);
  sgd.Step(model);
  other.ComputeGradients(x, labels, 2);
  other_sgd.Step(other);
  EXPECT_EQ(other.layers()[0].weights, model.layers()[0].weights);

  // Another model shape, a cut payload, other options: errors, no crash.
  Mlp wider({6, 7, 3}, 1);
  Sgd wider_sgd(wider, {});
  StateReader shape(w.bytes(), "ck");
  (void)shape.String();
  RestoreLoop(shape, r2, l2);
  RestoreModel(shape, wider, wider_sgd);
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kDataLoss);
  for (size_t cut = 0; cut < w.bytes().size(); cut += 97) {
    StateReader part(std::string_view(w.bytes()).substr(0, cut), "ck");
    (void)part.String();
    RestoreLoop(part, r2, l2);
    RestoreModel(part, other, other_sgd);
    EXPECT_FALSE(part.Finish().ok()) << cut;
  }
  TrainOptions changed = options;
  changed.echo = 2;
  StateReader fp(w.bytes(), "ck-file");
  absl::Status s = CheckFingerprint(fp, changed, "ck-file");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("echo=1 there, echo=2 here"), std::string::npos) << s;
}

}  // namespace
}  // namespace trainer
