// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The stage lifecycle UnaryStage writes once (stage.h): a stage that failed
// refuses SaveState() with one message and returns its error from Restart()
// before its input is asked anything; a stage opts in to starting over with
// its input (Restarts::kWithInput) and drops what it holds in OnRestart().
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using ::dataecho::testing::MakeExamples;

// Fails at the third element, as a decoder meeting a corrupt record would.
absl::StatusOr<Example> FailAtThird(Example ex) {
  if (ex.source_index == 2) return absl::DataLossError("corrupt record at file.rec:2");
  return ex;
}

// Pulls until the error and returns it.
template <typename T>
absl::Status PullToError(Stage<T>& stage) {
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<std::optional<T>> r = stage.Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) break;
  }
  return absl::OkStatus();
}

template <typename T>
void ExpectRefusesAfterError(absl::StatusOr<StagePtr<T>> made, const std::string& name) {
  ASSERT_TRUE(made.ok()) << made.status();
  StagePtr<T> stage = *std::move(made);
  ASSERT_TRUE(stage->EnableRestart().ok());
  const absl::Status error = PullToError(*stage);
  ASSERT_EQ(error.code(), absl::StatusCode::kDataLoss) << name << ": " << error;

  StateWriter w;
  const absl::Status saved = stage->SaveState(w);
  EXPECT_EQ(saved.code(), absl::StatusCode::kFailedPrecondition) << name << ": " << saved;
  EXPECT_EQ(saved.message(), name + " cannot save its state after an error: " + error.ToString());

  // The error stays: a new epoch does not clear it.
  EXPECT_EQ(stage->Restart(1), error) << name;
  EXPECT_EQ(PullToError(*stage).code(), absl::StatusCode::kDataLoss) << name;
}

TEST(StageLifecycleTest, BatchRefusesToSaveAndRestartAfterAnError) {
  ExpectRefusesAfterError(
      FromVector(MakeExamples(8)).Map(FailAtThird).Batch({.batch_size = 2}).Release(), "batch");
}

TEST(StageLifecycleTest, PaddedBatchRefusesToSaveAndRestartAfterAnError) {
  ExpectRefusesAfterError(
      FromVector(MakeExamples(8)).Map(FailAtThird).PaddedBatch({.batch_size = 2}).Release(),
      "padded_batch");
}

TEST(StageLifecycleTest, ShuffleRefusesToSaveAndRestartAfterAnError) {
  ExpectRefusesAfterError(
      FromVector(MakeExamples(8)).Map(FailAtThird).Shuffle({.buffer_size = 2, .seed = 1}).Release(),
      "shuffle");
}

TEST(StageLifecycleTest, FilterRefusesToSaveAndRestartAfterAnError) {
  auto pred = [](const Example& ex) -> absl::StatusOr<bool> {
    if (ex.source_index == 2) return absl::DataLossError("corrupt record at file.rec:2");
    return true;
  };
  ExpectRefusesAfterError(FromVector(MakeExamples(8)).Filter(pred).Release(), "filter");
}

TEST(StageLifecycleTest, MapRefusesToSaveAndRestartAfterAnError) {
  ExpectRefusesAfterError(FromVector(MakeExamples(8)).Map(FailAtThird).Release(), "map");
}

// A stage written outside the library: it opts in to restarting with its
// input and counts what it passed in the current epoch.
class CountingStage final : public UnaryStage<int64_t, int64_t> {
 public:
  explicit CountingStage(StagePtr<int64_t> input)
      : UnaryStage(std::move(input), Restarts::kWithInput) {}

  absl::StatusOr<std::optional<int64_t>> Next() override {
    absl::StatusOr<std::optional<int64_t>> r = input().Next();
    if (r.ok() && r->has_value()) ++in_epoch_;
    return r;
  }
  int64_t in_epoch() const { return in_epoch_; }
  uint32_t epoch() const { return epoch_; }

 protected:
  absl::Status OnRestart(uint32_t epoch) override {
    in_epoch_ = 0;
    epoch_ = epoch;
    return absl::OkStatus();
  }
  StageStats OwnStats() const override {
    StageStats s;
    s.name = "counting";
    return s;
  }

 private:
  int64_t in_epoch_ = 0;
  uint32_t epoch_ = 0;
};

// Without the opt-in a stage keeps Stage's answer: it cannot start over.
class PlainStage final : public UnaryStage<int64_t, int64_t> {
 public:
  using UnaryStage::UnaryStage;
  absl::StatusOr<std::optional<int64_t>> Next() override { return input().Next(); }

 protected:
  StageStats OwnStats() const override {
    StageStats s;
    s.name = "plain";
    return s;
  }
};

TEST(StageLifecycleTest, AStageThatOptsInStartsOverWithItsInput) {
  auto source = VectorSource<int64_t>({1, 2, 3});
  ASSERT_TRUE(source.ok());
  CountingStage stage(*std::move(source));
  ASSERT_TRUE(stage.EnableRestart().ok());
  std::vector<int64_t> seen;
  for (int epoch = 0; epoch < 2; ++epoch) {
    if (epoch > 0) ASSERT_TRUE(stage.Restart(epoch).ok());
    EXPECT_EQ(stage.epoch(), static_cast<uint32_t>(epoch));
    while (true) {
      absl::StatusOr<std::optional<int64_t>> r = stage.Next();
      ASSERT_TRUE(r.ok());
      if (!r->has_value()) break;
      seen.push_back(**r);
    }
    EXPECT_EQ(stage.in_epoch(), 3);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
}

TEST(StageLifecycleTest, AStageThatDoesNotOptInCannotStartOver) {
  auto source = VectorSource<int64_t>({1, 2, 3});
  ASSERT_TRUE(source.ok());
  PlainStage stage(*std::move(source));
  EXPECT_EQ(stage.EnableRestart().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(stage.Restart(1).code(), absl::StatusCode::kUnimplemented);
}

// Counts the constructions, moves and destructions of its objects.
struct Tracked {
  static inline int alive = 0, moves = 0;
  Tracked() { ++alive; }
  Tracked(const Tracked&) { ++alive; }
  Tracked(Tracked&&) noexcept {
    ++alive;
    ++moves;
  }
  Tracked& operator=(Tracked&&) noexcept {
    ++moves;
    return *this;
  }
  ~Tracked() { --alive; }
};

// The pull helpers set a result in place (stage.h): no element is moved, and
// a Next() that throws leaves an object behind to destroy, not a hole.
TEST(AssignInPlaceTest, BuildsTheResultWhereItGoes) {
  Tracked::alive = Tracked::moves = 0;
  {
    std::optional<Tracked> out;
    internal::AssignInPlace(&out, [] { return std::optional<Tracked>(std::in_place); });
    EXPECT_TRUE(out.has_value());
    EXPECT_EQ(Tracked::moves, 0);
    EXPECT_EQ(Tracked::alive, 1);
    EXPECT_THROW(internal::AssignInPlace(&out,
                                         []() -> std::optional<Tracked> {
                                           throw std::runtime_error("a Next() that throws");
                                         }),
                 std::runtime_error);
    EXPECT_FALSE(out.has_value());
    EXPECT_EQ(Tracked::alive, 0);
  }
  EXPECT_EQ(Tracked::alive, 0);
}

}  // namespace
}  // namespace dataecho
