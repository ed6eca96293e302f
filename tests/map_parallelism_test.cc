// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// MapOptions::parallelism_control (map_parallelism.h): a Map's workers raised
// while it runs. Results stay in input order, epochs and checkpoints work as
// with a fixed count, and the Map's figures are readable through it.
#include "dataecho/map_parallelism.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dataecho/map.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/resume_check.h"

namespace dataecho {
namespace {

using testing::Drain;

double StageExtra(const std::vector<StageStats>& stats, const std::string& name,
                  const std::string& key) {
  for (const StageStats& s : stats) {
    if (s.name == name) return s.Extra(key, -1);
  }
  return -1;
}

// x * 2, raising `control` to `to` workers once it has seen `at`.
std::function<int64_t(int64_t)> RaiseAt(std::shared_ptr<MapParallelism> control, int64_t at,
                                        int to) {
  return [control, at, to](int64_t x) {
    if (x == at) control->Raise(to);
    std::this_thread::sleep_for(std::chrono::microseconds((x * 7919) % 200));  // uneven work
    return x * 2;
  };
}

TEST(MapParallelismTest, RaisesNeverLowersAndClamps) {
  MapParallelism c;
  EXPECT_EQ(c.requested(), 0);
  c.Raise(3);
  c.Raise(2);
  EXPECT_EQ(c.requested(), 3);
  c.Raise(1 << 20);
  EXPECT_EQ(c.requested(), MapParallelism::kMaxWorkers);
  EXPECT_FALSE(c.Read().attached);
}

TEST(MapParallelismTest, RaisedMidStreamKeepsInputOrder) {
  for (int start : {0, 1}) {  // inline, and one worker
    auto control = std::make_shared<MapParallelism>();
    auto p = FromRange(0, 400).Map(RaiseAt(control, 100, 4),
                                   {.parallelism = start, .parallelism_control = control});
    ASSERT_TRUE(p.status().ok()) << p.status();
    for (int64_t i = 0; i < 400; ++i) {
      auto next = p.Next();
      ASSERT_TRUE(next.ok()) << next.status();
      ASSERT_TRUE(next->has_value()) << i;
      ASSERT_EQ(**next, 2 * i) << "start " << start;
    }
    auto end = p.Next();
    ASSERT_TRUE(end.ok() && !end->has_value());
    EXPECT_EQ(StageExtra(p.Stats(), "map", "parallelism"), 4) << "start " << start;
    const MapParallelism::Reading r = control->Read();
    EXPECT_TRUE(r.attached);
    EXPECT_EQ(r.name, "map");
    EXPECT_EQ(r.workers, 4);
    EXPECT_EQ(r.elements, 400);
    EXPECT_GT(r.busy_ns, 0);
  }
}

TEST(MapParallelismTest, TheMapDetachesWhenItGoes) {
  auto control = std::make_shared<MapParallelism>();
  {
    auto p = FromRange(0, 10).Map([](int64_t x) { return x; },
                                  {.parallelism = 2, .name = "m", .parallelism_control = control});
    ASSERT_TRUE(p.Next().ok());
    EXPECT_TRUE(control->Read().attached);
  }
  EXPECT_FALSE(control->Read().attached);
  control->Raise(5);  // no Map: nothing happens
}

TEST(MapParallelismTest, EpochsAfterARaiseRepeatInOrder) {
  for (int start : {0, 1}) {
    auto control = std::make_shared<MapParallelism>();
    auto p =
        FromRange(0, 200)
            .Map(RaiseAt(control, 50, 3), {.parallelism = start, .parallelism_control = control})
            .Prefetch({.depth = 8})
            .Repeat(3);
    ASSERT_TRUE(p.status().ok()) << p.status();
    auto got = Drain(**std::move(p).Release());
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 600u) << start;
    for (size_t i = 0; i < got->size(); ++i) ASSERT_EQ((*got)[i], int64_t(i % 200) * 2) << i;
    EXPECT_EQ(control->requested(), 3);
  }
}

// Saved before, at and after the raise, restored into a pipeline that has not
// raised (yet): the same continuation as an uninterrupted run.
TEST(MapParallelismTest, CheckpointsResumeAcrossARaise) {
  for (int start : {0, 1}) {
    testing::CheckResumes<int64_t>([start] {
      auto control = std::make_shared<MapParallelism>();
      return FromRange(0, 150).Map(RaiseAt(control, 40, 3),
                                   {.parallelism = start, .parallelism_control = control});
    });
  }
}

TEST(MapParallelismTest, DestroyedRightAfterARaiseReturns) {
  auto control = std::make_shared<MapParallelism>();
  auto p = FromRange(0, 100000)
               .Map(RaiseAt(control, 5, 8), {.parallelism = 1, .parallelism_control = control})
               .Prefetch({.depth = 4});
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(p.Next().ok());
  // Leaves scope with 8 workers running: the destructor must not hang.
}

}  // namespace
}  // namespace dataecho
