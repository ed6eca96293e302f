// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Every stage factory checks its options and input and returns
// INVALID_ARGUMENT naming the bad one (nothing is clamped), and the builder
// turns a failed factory into the pipeline's error.
#include <cstdint>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

using ::testing::HasSubstr;

// `s` is INVALID_ARGUMENT and its message contains `what`.
void ExpectInvalid(const absl::Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(what));
}

StagePtr<int64_t> Numbers() { return *RangeSource(0, 10); }

TEST(StageFactoryTest, PrefetchRejectsDepthBelowOne) {
  // depth < 1 used to be raised to 1 without a word.
  for (int depth : {0, -1}) {
    auto p = PrefetchStage<int64_t>::Make(Numbers(), {.depth = depth});
    ExpectInvalid(p.status(), "prefetch depth must be >= 1, got " + std::to_string(depth));
  }
  auto pipeline = FromRange(0, 10).Prefetch({.depth = 0});
  ExpectInvalid(pipeline.status(), "prefetch depth");
  ExpectInvalid(pipeline.Next().status(), "prefetch depth");
}

TEST(StageFactoryTest, PrefetchDefaultsStillWork) {
  auto p = PrefetchStage<int64_t>::Make(Numbers());
  ASSERT_TRUE(p.ok()) << p.status();
  int64_t n = 0;
  while ((*p)->Next()->has_value()) ++n;
  EXPECT_EQ(n, 10);
}

TEST(StageFactoryTest, RangeRejectsStepBelowOne) {
  // Used to fail only on the first Next().
  ExpectInvalid(RangeSource(0, 10, 0).status(), "range step must be >= 1, got 0");
  ExpectInvalid(RangeSource(0, 10, -2).status(), "range step must be >= 1, got -2");
  ExpectInvalid(FromRange(0, 10, 0).status(), "range step");
}

TEST(StageFactoryTest, EmptyFunctionsAreRejected) {
  ExpectInvalid(GeneratorSource<int>(nullptr).status(), "generator: empty fn");
  ExpectInvalid(FromGenerator<int>(nullptr).status(), "generator: empty fn");
  ExpectInvalid(RepeatSource<int64_t>(nullptr, 2).status(), "repeat: empty factory");
  ExpectInvalid(MapStage<int64_t, int64_t>::Make(Numbers(), nullptr, {.name = "decode"}).status(),
                "decode: empty fn");
}

TEST(StageFactoryTest, NullInputIsRejectedByEveryUnaryStage) {
  ExpectInvalid(PrefetchStage<int64_t>::Make(nullptr).status(), "prefetch: null input stage");
  ExpectInvalid(TakeStage<int64_t>::Make(nullptr, 3).status(), "take: null input stage");
  ExpectInvalid(ShuffleStage<int64_t>::Make(nullptr, {}).status(), "shuffle: null input stage");
  ExpectInvalid(ThrottleStage<int64_t>::Make(nullptr, {}).status(), "throttle: null input stage");
  ExpectInvalid((MapStage<int64_t, int64_t>::Make(nullptr, [](int64_t x) { return x; }).status()),
                "map: null input stage");
  ExpectInvalid(BatchStage::Make(nullptr, {}).status(), "batch: null input stage");
}

TEST(StageFactoryTest, BadOptionsNameTheOption) {
  ExpectInvalid(ShuffleStage<int64_t>::Make(Numbers(), {.buffer_size = 0}).status(),
                "shuffle buffer_size must be >= 1, got 0");
  ExpectInvalid(ShuffleStage<int64_t>::Make(Numbers(), {.max_bytes = -1}).status(),
                "shuffle max_bytes must be >= 0, got -1");
  ExpectInvalid(
      MapStage<int64_t, int64_t>::Make(Numbers(), [](int64_t x) { return x; }, {.buffer = -1})
          .status(),
      "map buffer must be >= 0, got -1");
  ExpectInvalid(
      MapStage<int64_t, int64_t>::Make(Numbers(), [](int64_t x) { return x; }, {.parallelism = -1})
          .status(),
      "map parallelism");
}

TEST(StageFactoryTest, RepeatPassesTheFactoryErrorOnAndKeepsIt) {
  int calls = 0;
  auto r = RepeatSource<int64_t>(
      [&calls]() -> absl::StatusOr<StagePtr<int64_t>> {
        if (++calls == 2) return absl::NotFoundError("shard gone");
        return RangeSource(0, 2);
      },
      3);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<int64_t> got;
  absl::StatusOr<std::optional<int64_t>> next;
  while ((next = (*r)->Next()).ok() && next->has_value()) got.push_back(**next);
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(next.status(), absl::NotFoundError("shard gone"));
  EXPECT_EQ((*r)->Next().status(), absl::NotFoundError("shard gone"));  // sticky
  EXPECT_EQ(calls, 2);

  auto null_factory = RepeatSource<int64_t>([] { return StagePtr<int64_t>(); }, 1);
  ExpectInvalid((*null_factory)->Next().status(), "repeat: the factory returned a null stage");
}

TEST(StageFactoryTest, FromTakesAFactoryResult) {
  auto ok = From(RangeSource(0, 3)).Take(2).Release();
  ASSERT_TRUE(ok.ok()) << ok.status();
  int64_t n = 0;
  while ((*ok)->Next()->has_value()) ++n;
  EXPECT_EQ(n, 2);
  ExpectInvalid(From(RangeSource(0, 3, 0)).Take(2).status(), "range step");
}

}  // namespace
}  // namespace dataecho
