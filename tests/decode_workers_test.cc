// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Auto placement's decode workers (src/internal/decode_workers.h): the
// decision on constructed windows, and EchoedBatches with kAuto raising a
// deliberately costly decode Map's workers on a real pipeline.
#include "internal/decode_workers.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "dataecho/echo_placement.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using internal::DecodeContext;
using internal::DecodeWindow;
using internal::PlanDecodeWorkers;

// One worker decoding at 2.45 ms an item, busy all the time, its consumer
// (the boundary Prefetch) waiting for it most of the window.
DecodeWindow Busy() {
  return {.name = "decode",
          .workers = 1,
          .wall_s = 1.0,
          .elements = 400,
          .busy_s = 0.98,
          .consumer_wait_s = 0.6,
          .input_wait_s = 0.01,
          .item_bytes = 1000};
}

// Four cores; the pipeline spends 2.6 ms of CPU per fresh item (decoding
// most of it); the upstream is the bottleneck.
DecodeContext FourCores() {
  return {.cores = 4, .cpu_per_fresh = 2.6e-3, .upstream_bound = true, .ram_left = 1 << 28};
}

TEST(PlanDecodeWorkersTest, RaisesABusyDecodeMapToWhatTheCoresCanRun) {
  std::string why;
  // 408 items/s on one worker, 1538/s on the cores: 2.45 ms x 1538/s = 3.8 -> 4.
  EXPECT_EQ(PlanDecodeWorkers(Busy(), FourCores(), &why), 4) << why;
  EXPECT_NE(why.find("decode Map 'decode' 1 -> 4 workers"), std::string::npos) << why;
  EXPECT_NE(why.find("4 pipeline cores"), std::string::npos) << why;
  // Fewer when the rest of the pipeline takes more of the cores' CPU.
  DecodeContext heavy = FourCores();
  heavy.cpu_per_fresh = 4.5e-3;  // 889 items/s on 4 cores: 2.45 ms x 889/s = 2.2 -> 3
  EXPECT_EQ(PlanDecodeWorkers(Busy(), heavy, &why), 3) << why;
  // An inline Map (its caller's thread decodes) becomes a parallel one.
  DecodeWindow inline_map = Busy();
  inline_map.workers = 0;
  inline_map.consumer_wait_s = 0;
  EXPECT_EQ(PlanDecodeWorkers(inline_map, FourCores(), &why), 4) << why;
}

TEST(PlanDecodeWorkersTest, NotWhenTheCoresAreTheLimit) {
  std::string why;
  DecodeContext one = FourCores();
  one.cores = 1;  // the CPU-bound bench: one pipeline core, one worker
  EXPECT_EQ(PlanDecodeWorkers(Busy(), one, &why), 1) << why;
  // Two cores, but the augmentation takes so much CPU per fresh item that
  // the cores could not keep a second worker busy.
  DecodeContext two = FourCores();
  two.cores = 2;
  two.cpu_per_fresh = 6e-3;  // 333 items/s on the cores, 408/s on one worker
  EXPECT_EQ(PlanDecodeWorkers(Busy(), two, &why), 1) << why;
  EXPECT_NE(why.find("the cores are the limit"), std::string::npos) << why;
  two.cpu_per_fresh = 3e-3;  // 667/s on the cores: a second worker
  EXPECT_EQ(PlanDecodeWorkers(Busy(), two, &why), 2) << why;
}

TEST(PlanDecodeWorkersTest, NotWhenSomethingElseIsTheBottleneck) {
  std::string why;
  DecodeContext consumer_bound = FourCores();
  consumer_bound.upstream_bound = false;  // the boundary Prefetch was full
  EXPECT_EQ(PlanDecodeWorkers(Busy(), consumer_bound, &why), 1) << why;
  EXPECT_NE(why.find("not the bottleneck"), std::string::npos) << why;
  DecodeWindow idle = Busy();
  idle.busy_s = 0.3;  // a slow reader above it, or a throttle below
  EXPECT_EQ(PlanDecodeWorkers(idle, FourCores(), &why), 1) << why;
  DecodeWindow starved = Busy();
  starved.input_wait_s = 0.5;  // its input (reads) is the bottleneck
  EXPECT_EQ(PlanDecodeWorkers(starved, FourCores(), &why), 1) << why;
  DecodeWindow unwaited = Busy();
  unwaited.consumer_wait_s = 0.02;  // results were ready when asked for
  EXPECT_EQ(PlanDecodeWorkers(unwaited, FourCores(), &why), 1) << why;
}

TEST(PlanDecodeWorkersTest, NeedsEnoughItemsInTheWindow) {
  DecodeWindow few = Busy();
  few.elements = internal::kDecodeMinElements - 1;
  std::string why;
  EXPECT_EQ(PlanDecodeWorkers(few, FourCores(), &why), 1) << why;
  EXPECT_NE(why.find("too few"), std::string::npos) << why;
}

TEST(PlanDecodeWorkersTest, KeepsTheWindowsWithinTheRamBudget) {
  DecodeWindow big = Busy();
  big.item_bytes = 10 << 20;  // a worker holds up to 2 results of 10 MiB (2.45 ms: one a batch)
  DecodeContext c = FourCores();
  c.ram_left = 45 << 20;  // room for 2 more workers
  std::string why;
  EXPECT_EQ(PlanDecodeWorkers(big, c, &why), 3) << why;
  c.ram_left = 10 << 20;  // none
  EXPECT_EQ(PlanDecodeWorkers(big, c, &why), 1) << why;
  EXPECT_NE(why.find("RAM budget"), std::string::npos) << why;
}

// --- EchoedBatches with kAuto on a real pipeline ---

void BusyWait(absl::Duration d) {
  const absl::Time end = absl::Now() + d;
  while (absl::Now() < end) {
  }
}

TEST(AutoDecodeWorkersTest, ACostlyDecodeMapGetsMoreWorkers) {
  // Decoding costs 2 ms of CPU an item on one worker; nothing else costs
  // anything and the consumer takes batches as fast as they come: the
  // decode Map is the bottleneck, and 3 pipeline cores could run more of it.
  auto decode = std::make_shared<MapParallelism>();
  Pipeline<Example> decoded =
      FromVector(testing::MakeExamples(4000))
          .Map(
              [](Example e) -> absl::StatusOr<Example> {
                BusyWait(absl::Milliseconds(2));
                return e;
              },
              {.parallelism = 1, .name = "decode", .parallelism_control = decode})
          .Prefetch({.depth = 32});
  Pipeline<Batch> p =
      EchoedBatches(std::move(decoded), [](Example e) -> absl::StatusOr<Example> { return e; },
                    {.placement = EchoPlacement::kAuto,
                     .shuffle = {.buffer_size = 32, .seed = 2},
                     .batch = {.batch_size = 8},
                     .prefetch = {.depth = 2},
                     // No echo (max_factor 1): every row is fresh, only the workers change.
                     .auto_placement = {.max_factor = 1, .pipeline_cores = 3, .decide_every = 4},
                     .decode_parallelism = decode});
  ASSERT_TRUE(p.status().ok()) << p.status();
  std::map<uint64_t, int> seen;
  int64_t rows = 0;
  for (int i = 0; i < 80; ++i) {
    auto b = p.Next();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(b->has_value());
    const auto ids = (*b)->source_indices.data<int64_t>();
    for (int64_t r = 0; r < (*b)->num_rows; ++r) ++seen[static_cast<uint64_t>(ids[r])];
    rows += (*b)->num_rows;
  }
  const std::vector<StageStats> stats = p.Stats();
  const std::string table = FormatStatsTable(stats);
  const StageStats& planner = stats.back();
  bool noted = false;
  for (const std::string& note : planner.notes) {
    if (note.find("decode Map 'decode' 1 -> ") != std::string::npos) noted = true;
  }
  EXPECT_TRUE(noted) << table;
  EXPECT_GE(planner.Extra("decode_workers"), 2) << table;
  EXPECT_LE(planner.Extra("decode_workers"), 3) << table;  // never more than the cores
  EXPECT_GE(decode->Read().workers, 2) << table;
  for (const StageStats& s : stats) {
    if (s.name == "decode") EXPECT_GE(s.Extra("parallelism"), 2) << table;
  }
  EXPECT_NE(StatsToJson({planner}).find("decode Map 'decode' 1 -> "), std::string::npos);
  // Every item once: more workers lose and duplicate nothing.
  EXPECT_EQ(static_cast<int64_t>(seen.size()), rows);
}

TEST(AutoDecodeWorkersTest, WithoutAControlTheDecodeIsLeftAlone) {
  Pipeline<Example> decoded = FromVector(testing::MakeExamples(400))
                                  .Map(
                                      [](Example e) -> absl::StatusOr<Example> {
                                        BusyWait(absl::Microseconds(500));
                                        return e;
                                      },
                                      {.parallelism = 1, .name = "decode"})
                                  .Prefetch({.depth = 32});
  Pipeline<Batch> p =
      EchoedBatches(std::move(decoded), nullptr,
                    {.placement = EchoPlacement::kAuto,
                     .batch = {.batch_size = 8},
                     .auto_placement = {.max_factor = 1, .pipeline_cores = 3, .decide_every = 4}});
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(p.Next().ok());
  const std::vector<StageStats> stats = p.Stats();
  EXPECT_EQ(stats.back().Extra("decode_workers", -1), -1);
  for (const StageStats& s : stats) {
    if (s.name == "decode") EXPECT_EQ(s.Extra("parallelism"), 1);
  }
}

}  // namespace
}  // namespace dataecho
