// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// EchoedBatches builds the documented pipeline for every placement.
#include "dataecho/echo_placement.h"

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::MakeExamples;

constexpr int64_t kItems = 64;
constexpr int64_t kBytes = 4;
constexpr int64_t kBatch = 8;

// The test's augmentation: the repeat index stamped into the bytes.
absl::StatusOr<Example> Augment(Example e) { return testing::StampRepeat(std::move(e), kBytes); }

Pipeline<Example> Decoded() { return FromVector(MakeExamples(kItems, kBytes)).Prefetch({}); }

EchoedBatchesOptions Options(EchoPlacement placement, double factor) {
  return {.placement = placement,
          .echo = {.factor = factor, .seed = 1},
          .adaptive = {.max_factor = factor, .pool_size = 16, .seed = 1},
          .shuffle = {.buffer_size = 16, .seed = 2},
          .batch = {.batch_size = kBatch},
          .prefetch = {.depth = 2}};
}

struct Row {
  uint64_t source_index;
  uint32_t repeat_index;  // the example's
  std::string pixels;
};

struct Drained {
  std::vector<Batch> batches;
  std::vector<Row> rows;
  int64_t fresh_rows = 0;
  std::vector<std::string> stages;
};

Drained Drain(Pipeline<Batch> p) {
  Drained d;
  EXPECT_TRUE(p.status().ok()) << p.status();
  while (true) {
    auto b = p.Next();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok() || !b->has_value()) break;
    const Batch& batch = **b;
    d.fresh_rows += batch.fresh_rows;
    const auto pixels = batch.components[0].data<uint8_t>();
    for (int64_t i = 0; i < batch.num_rows; ++i) {
      d.rows.push_back(
          {static_cast<uint64_t>(batch.source_indices.data<int64_t>()[i]),
           static_cast<uint32_t>(batch.repeat_indices.data<int32_t>()[i]),
           std::string(reinterpret_cast<const char*>(pixels.data()) + i * kBytes, kBytes)});
    }
    d.batches.push_back(batch);
  }
  for (const StageStats& s : p.Stats()) d.stages.push_back(s.name);
  return d;
}

// Per source index: its rows, their distinct payloads and repeat indices.
struct Copies {
  int rows = 0;
  std::set<std::string> pixels;
  std::set<uint32_t> repeats;
};
std::map<uint64_t, Copies> ByItem(const Drained& d) {
  std::map<uint64_t, Copies> out;
  for (const Row& r : d.rows) {
    Copies& c = out[r.source_index];
    ++c.rows;
    c.pixels.insert(r.pixels);
    c.repeats.insert(r.repeat_index);
  }
  return out;
}

// Stage names after the source and the upstream's prefetch.
std::vector<std::string> Tail(const std::vector<std::string>& stages) {
  return std::vector<std::string>(stages.begin() + 2, stages.end());
}

TEST(EchoPlacementTest, NamesAreTheFlagValues) {
  const std::vector<std::string> names = {"before_augment", "after_augment", "batch", "adaptive",
                                          "auto"};
  size_t i = 0;
  for (EchoPlacement placement : kEchoPlacements) {
    EXPECT_EQ(EchoPlacementName(placement), names[i++]);
    absl::StatusOr<EchoPlacement> parsed = ParseEchoPlacement(EchoPlacementName(placement));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, placement);
  }
  EXPECT_EQ(ParseEchoPlacement("middle").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEchoPlacement("").status().code(), absl::StatusCode::kInvalidArgument);
}

// Example echoing with e = 3 at `placement`: checks the stage order and that
// every item arrives three times, once fresh; the rows grouped by item.
std::map<uint64_t, Copies> ThreeCopiesByItem(EchoPlacement placement,
                                             const std::vector<std::string>& stages) {
  Drained d = Drain(EchoedBatches(Decoded(), Augment, Options(placement, 3)));
  EXPECT_EQ(Tail(d.stages), stages);
  EXPECT_EQ(d.rows.size(), static_cast<size_t>(3 * kItems));
  EXPECT_EQ(d.fresh_rows, kItems);
  std::map<uint64_t, Copies> items = ByItem(d);
  EXPECT_EQ(items.size(), static_cast<size_t>(kItems));
  return items;
}

TEST(EchoPlacementTest, BeforeAugmentAugmentsEveryCopyAnew) {
  const std::map<uint64_t, Copies> items = ThreeCopiesByItem(
      EchoPlacement::kBeforeAugment, {"echo", "map", "shuffle", "batch", "prefetch#2"});
  for (const auto& [index, c] : items) {
    EXPECT_EQ(c.pixels.size(), 3u) << index;  // three copies, three augmentations
    EXPECT_EQ(c.repeats, (std::set<uint32_t>{0, 1, 2})) << index;
  }
}

TEST(EchoPlacementTest, AfterAugmentRepeatsTheAugmentedItem) {
  const std::map<uint64_t, Copies> items = ThreeCopiesByItem(
      EchoPlacement::kAfterAugment, {"map", "echo", "shuffle", "batch", "prefetch#2"});
  for (const auto& [index, c] : items) {
    EXPECT_EQ(c.pixels.size(), 1u) << index;  // identical copies
    EXPECT_EQ(c.rows, 3) << index;
  }
}

TEST(EchoPlacementTest, BatchRepeatsWholeBatches) {
  Drained d = Drain(EchoedBatches(Decoded(), Augment, Options(EchoPlacement::kBatch, 2)));
  EXPECT_EQ(Tail(d.stages),
            (std::vector<std::string>{"map", "shuffle", "batch", "echo", "prefetch#2"}));
  ASSERT_EQ(d.batches.size(), static_cast<size_t>(2 * kItems / kBatch));
  EXPECT_EQ(d.fresh_rows, kItems);
  for (size_t i = 0; i < d.batches.size(); ++i) {
    const Batch& b = d.batches[i];
    EXPECT_EQ(b.repeat_index, i % 2) << i;
    EXPECT_EQ(b.fresh_rows, i % 2 == 0 ? kBatch : 0) << i;
    // The repeat shares the batch's buffer.
    EXPECT_EQ(b.components[0].buffer().data(), d.batches[i - i % 2].components[0].buffer().data());
  }
  for (const Row& r : d.rows) EXPECT_EQ(r.repeat_index, 0u);  // rows are fresh examples
}

TEST(EchoPlacementTest, FactorOneIsAPassThroughStage) {
  for (EchoPlacement placement :
       {EchoPlacement::kBeforeAugment, EchoPlacement::kAfterAugment, EchoPlacement::kBatch}) {
    Drained d = Drain(EchoedBatches(Decoded(), Augment, Options(placement, 1)));
    EXPECT_EQ(d.rows.size(), static_cast<size_t>(kItems)) << EchoPlacementName(placement);
    EXPECT_EQ(d.fresh_rows, kItems) << EchoPlacementName(placement);
  }
}

TEST(EchoPlacementTest, AdaptiveEchoesBeforeAugmentWithTheDemandGate) {
  auto level = std::make_shared<std::atomic<int64_t>>(-1);
  EchoedBatchesOptions options = Options(EchoPlacement::kAdaptive, 3);
  options.prefetch.level = level;
  Drained d = Drain(EchoedBatches(Decoded(), Augment, std::move(options)));
  // The batch echo and the planner at the top: the regime-aware part
  // (echo_planner.h), whose first plan comes after 3 x decide_every batches.
  EXPECT_EQ(Tail(d.stages), (std::vector<std::string>{"adaptive_echo", "map", "shuffle", "batch",
                                                      "echo:batch", "prefetch#2", "echo_planner"}));
  // Timing decides how many repeats; every item is read once, fresh, and
  // emitted at most m = 3 times, each copy augmented anew.
  EXPECT_EQ(d.fresh_rows, kItems);
  const std::map<uint64_t, Copies> items = ByItem(d);
  ASSERT_EQ(items.size(), static_cast<size_t>(kItems));
  for (const auto& [index, c] : items) {
    EXPECT_LE(c.rows, 3) << index;
    EXPECT_EQ(c.pixels.size(), static_cast<size_t>(c.rows)) << index;
  }
  // The final Prefetch publishes its queue into the level the gate reads.
  EXPECT_GE(level->load(), 0);
}

TEST(EchoPlacementTest, AClosedGateOfYourOwnMeansNoRepeats) {
  EchoedBatchesOptions options = Options(EchoPlacement::kAdaptive, 4);
  options.adaptive.repeat_gate = [] { return false; };
  options.adaptive.gate_poll = absl::Microseconds(10);
  Drained d = Drain(EchoedBatches(Decoded(), Augment, std::move(options)));
  EXPECT_EQ(d.rows.size(), static_cast<size_t>(kItems));
  EXPECT_EQ(d.fresh_rows, kItems);
}

TEST(EchoPlacementTest, BadOptionsAndUnknownPlacementsAreInvalidArguments) {
  EXPECT_EQ(EchoedBatches(Decoded(), Augment, Options(EchoPlacement::kBeforeAugment, 0.5))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      EchoedBatches(Decoded(), Augment, Options(EchoPlacement::kAdaptive, 0.5)).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      EchoedBatches(Decoded(), Augment, Options(static_cast<EchoPlacement>(99), 2)).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(EchoPlacementTest, WithoutAnAugmentationThereIsNoMap) {
  Drained d = Drain(EchoedBatches(Decoded(), nullptr, Options(EchoPlacement::kBeforeAugment, 2)));
  EXPECT_EQ(Tail(d.stages), (std::vector<std::string>{"echo", "shuffle", "batch", "prefetch#2"}));
  EXPECT_EQ(d.rows.size(), static_cast<size_t>(2 * kItems));
}

// A planner given an earlier one's decision (start_from) echoes at it from the
// first batch, and the auto placement starts over under a Repeat, the planner
// keeping its decision (a planner that cannot restart failed Repeat's Make).
TEST(EchoPlacementTest, AutoStartsFromAnEarlierPlanAndGoesOnOverEpochs) {
  EchoedBatchesOptions o = Options(EchoPlacement::kAuto, 1);
  o.auto_placement = {.max_factor = 4,
                      .decide_every = 1000,  // no plan of its own in this run
                      .start_from = EchoPlannerMemory{.placement = 2, .factor = 2}};
  Drained d = Drain(EchoedBatches(Decoded(), Augment, o).Repeat(2));
  ASSERT_EQ(d.batches.size(), static_cast<size_t>(2 * 2 * kItems / kBatch));
  EXPECT_EQ(d.fresh_rows, 2 * kItems);
  for (size_t i = 0; i < d.batches.size(); ++i) {
    EXPECT_EQ(d.batches[i].fresh_rows, i % 2 == 0 ? kBatch : 0) << i;  // batch echo, e = 2
    EXPECT_EQ(d.batches[i].epoch, i < d.batches.size() / 2 ? 0u : 1u) << i;
  }
}

}  // namespace
}  // namespace dataecho
