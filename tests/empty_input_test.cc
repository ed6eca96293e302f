// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// An empty dataset must end a pipeline, never spin it: a source with no
// elements, repeated forever, behind every echo placement, the adaptive and
// auto echo stages, Shuffle, Batch and Prefetch.
#include <atomic>
#include <memory>
#include <vector>

#include "dataecho/echo_placement.h"
#include "dataecho/pipeline.h"
#include "dataecho/source.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

// A factory of empty sources that counts its calls. Past `kSpinLimit` calls
// it fails, so that a stage that re-creates the source in a loop fails the
// test instead of hanging it.
constexpr int kSpinLimit = 1000;

template <typename T>
typename RepeatStage<T>::Factory EmptyFactory(std::shared_ptr<std::atomic<int>> calls) {
  return [calls]() -> absl::StatusOr<StagePtr<T>> {
    if (calls->fetch_add(1) >= kSpinLimit) {
      return absl::InternalError("the empty source was re-created in a loop");
    }
    return VectorSource(std::vector<T>{});
  };
}

TEST(EmptyInputTest, RepeatingAnEmptySourceForeverEnds) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto r = RepeatSource<int64_t>(EmptyFactory<int64_t>(calls), -1);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 3; ++i) {  // the end stays, without new epochs
    absl::StatusOr<std::optional<int64_t>> next = (*r)->Next();
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_FALSE(next->has_value());
  }
  EXPECT_EQ(calls->load(), 1);
}

TEST(EmptyInputTest, AnEmptyEpochEndsAFiniteRepeatToo) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto r = RepeatSource<int64_t>(EmptyFactory<int64_t>(calls), int64_t{1} << 40);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::optional<int64_t>> next = (*r)->Next();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(calls->load(), 1);
}

// A repeat whose later epoch is empty (a source that ran dry) ends there.
TEST(EmptyInputTest, RepeatEndsAtTheFirstEmptyEpoch) {
  auto epoch = std::make_shared<int>(0);
  auto r = RepeatSource<int64_t>(
      [epoch]() -> absl::StatusOr<StagePtr<int64_t>> {
        if (++*epoch > kSpinLimit) return absl::InternalError("spinning");
        return RangeSource(0, *epoch <= 2 ? 3 : 0);
      },
      -1);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<int64_t>> all = testing::Drain(**r);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(*epoch, 3);
}

// The upstream of a training pipeline over an empty dataset: epochs forever,
// decoded behind a Prefetch boundary.
Pipeline<Example> EmptyUpstream(std::shared_ptr<std::atomic<int>> calls) {
  return From(RepeatSource<Example>(EmptyFactory<Example>(std::move(calls)), -1))
      .Prefetch({.depth = 4});
}

BatchOptions Rows(int64_t n) { return {.batch_size = n, .drop_remainder = true}; }

TEST(EmptyInputTest, EveryEchoPlacementOverAnEmptyDatasetEnds) {
  for (EchoPlacement placement : kEchoPlacements) {
    SCOPED_TRACE(EchoPlacementName(placement));
    auto calls = std::make_shared<std::atomic<int>>(0);
    Pipeline<Batch> p = EchoedBatches(EmptyUpstream(calls), [](Example e) { return e; },
                                      {.placement = placement,
                                       .echo = {.factor = 3, .seed = 1},
                                       .adaptive = {.max_factor = 3, .pool_size = 8, .seed = 1},
                                       .shuffle = {.buffer_size = 16, .seed = 2},
                                       .batch = Rows(4),
                                       .prefetch = {.depth = 2}});
    ASSERT_TRUE(p.status().ok()) << p.status();
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<std::optional<Batch>> b = p.Next();
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_FALSE(b->has_value());
    }
    EXPECT_EQ(calls->load(), 1);
  }
}

TEST(EmptyInputTest, EchoStagesWaitingForAnItemEndWithTheirInput) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto fixed = EmptyUpstream(calls).Echo({.factor = 2.5, .seed = 1});
  auto adaptive = EmptyUpstream(calls).AdaptiveEcho({.max_factor = 4, .pool_size = 4, .seed = 1});
  auto automatic =
      EmptyUpstream(calls).AutoEcho({.adaptive = {.max_factor = 4, .seed = 1}, .warmup = 10});
  auto direct = FromVector(std::vector<Example>{}).AdaptiveEcho({.max_factor = 4, .seed = 1});
  for (Pipeline<Example>* p : {&fixed, &adaptive, &automatic, &direct}) {
    ASSERT_TRUE(p->status().ok()) << p->status();
    absl::StatusOr<std::optional<Example>> e = p->Next();
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_FALSE(e->has_value());
  }
  EXPECT_EQ(calls->load(), 3);
}

}  // namespace
}  // namespace dataecho
