// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The epoch planner (storage/epoch_plan.h) on simulated jobs: 1,024 ranks over
// 2,048 files of uneven sizes, metadata only, and restarts mid-epoch on a
// different number of ranks; world sizes and record counts that cannot be.
#include "dataecho/storage/epoch_plan.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/internal/random.h"
#include "dataecho/storage/sharding.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

using ::testing::HasSubstr;

// `n` files of uneven sizes: 1 to 3 times `base` records, a few empty ones.
std::vector<uint64_t> UnevenCounts(size_t n, uint64_t base, uint64_t seed) {
  internal::Rng rng(seed);
  std::vector<uint64_t> counts(n);
  for (uint64_t& c : counts) c = rng.Below(10) == 0 ? 0 : base + rng.Below(2 * base + 1);
  return counts;
}

// Marks every record of the job's reads; checks none is read twice.
class Ledger {
 public:
  explicit Ledger(const std::vector<uint64_t>& counts) : seen_(counts.size()) {
    for (size_t f = 0; f < counts.size(); ++f) seen_[f].assign(counts[f], 0);
  }
  void Read(uint64_t file, uint64_t record) {
    ASSERT_LT(file, seen_.size());
    ASSERT_LT(record, seen_[file].size());
    ++seen_[file][record];
  }
  void ReadRange(const RecordRange& r) {
    for (uint64_t i = r.begin; i < r.end; ++i) Read(r.file, i);
  }
  // Every record read exactly once.
  void ExpectExactlyOnce() const {
    for (size_t f = 0; f < seen_.size(); ++f) {
      for (size_t i = 0; i < seen_[f].size(); ++i) {
        ASSERT_EQ(seen_[f][i], 1) << "file " << f << " record " << i;
      }
    }
  }

 private:
  std::vector<std::vector<uint8_t>> seen_;
};

// The concatenation of every rank's slice, in rank order.
std::vector<RecordRange> Concatenation(const EpochPlan& plan) {
  std::vector<RecordRange> out;
  for (const auto& slice : plan.ranks) {
    for (const RecordRange& r : slice) {
      if (!out.empty() && out.back().file == r.file && out.back().end == r.begin) {
        out.back().end = r.end;
      } else {
        out.push_back(r);
      }
    }
  }
  return out;
}

TEST(EpochFileOrderTest, PermutationFixedBySeedAndEpoch) {
  const std::vector<uint64_t> a = EpochFileOrder(2048, 7, 0);
  std::vector<uint64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint64_t> identity(2048);
  std::iota(identity.begin(), identity.end(), uint64_t{0});
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(a, identity);
  EXPECT_EQ(a, EpochFileOrder(2048, 7, 0));
  EXPECT_NE(a, EpochFileOrder(2048, 7, 1));
  EXPECT_NE(a, EpochFileOrder(2048, 8, 0));
  EXPECT_EQ(EpochFileOrder(2048, 7, 3, /*shuffle=*/false), identity);
  EXPECT_TRUE(EpochFileOrder(0, 7, 0).empty());
}

TEST(EpochPlanTest, ThousandRanksReadEveryRecordOncePerEpochBalancedToOneRecord) {
  const std::vector<uint64_t> counts = UnevenCounts(2048, 250, 1);
  const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  const EpochPlanOptions options{.seed = 42, .mode = ShardMode::kRecords};
  std::vector<RecordRange> previous_order;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, options, {.epoch = epoch}, 1024);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->total_records, total);
    ASSERT_EQ(plan->ranks.size(), 1024u);
    Ledger ledger(counts);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int r = 0; r < 1024; ++r) {
      for (const RecordRange& range : plan->ranks[static_cast<size_t>(r)]) ledger.ReadRange(range);
      lo = std::min(lo, plan->RankRecords(r));
      hi = std::max(hi, plan->RankRecords(r));
    }
    ledger.ExpectExactlyOnce();
    EXPECT_LE(hi - lo, 1u) << "epoch " << epoch;
    EXPECT_EQ(lo, total / 1024);
    // The same seed gives the same plan; each epoch a different order.
    absl::StatusOr<EpochPlan> again = PlanEpoch(counts, options, {.epoch = epoch}, 1024);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->ranks, plan->ranks);
    const std::vector<RecordRange> order = Concatenation(*plan);
    EXPECT_NE(order, previous_order);
    previous_order = order;
  }
}

TEST(EpochPlanTest, FileShardingIsBalancedWithinOneFile) {
  const std::vector<uint64_t> counts = UnevenCounts(2048, 250, 2);
  const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  const uint64_t largest = *std::max_element(counts.begin(), counts.end());
  for (int world : {1, 3, 64, 1024}) {
    absl::StatusOr<EpochPlan> plan =
        PlanEpoch(counts, {.seed = 9, .mode = ShardMode::kFiles}, {.epoch = 2}, world);
    ASSERT_TRUE(plan.ok()) << plan.status();
    Ledger ledger(counts);
    for (int r = 0; r < world; ++r) {
      for (const RecordRange& range : plan->ranks[static_cast<size_t>(r)]) {
        EXPECT_EQ(range.begin, 0u);  // whole files
        EXPECT_EQ(range.end, counts[range.file]);
        ledger.ReadRange(range);
      }
      const double share = static_cast<double>(total) / world;
      EXPECT_LT(std::abs(static_cast<double>(plan->RankRecords(r)) - share),
                static_cast<double>(largest))
          << "world " << world << " rank " << r;
    }
    ledger.ExpectExactlyOnce();
  }
}

// The job's order (all slices, in rank order) is the same at every world size.
TEST(EpochPlanTest, OrderDoesNotDependOnWorldSize) {
  const std::vector<uint64_t> counts = UnevenCounts(300, 40, 3);
  for (ShardMode mode : {ShardMode::kRecords, ShardMode::kFiles}) {
    absl::StatusOr<EpochPlan> one = PlanEpoch(counts, {.seed = 5, .mode = mode}, {.epoch = 4}, 1);
    ASSERT_TRUE(one.ok());
    for (int world : {2, 7, 128, 5000}) {
      absl::StatusOr<EpochPlan> plan =
          PlanEpoch(counts, {.seed = 5, .mode = mode}, {.epoch = 4}, world);
      ASSERT_TRUE(plan.ok());
      EXPECT_EQ(Concatenation(*plan), Concatenation(*one)) << "world " << world;
    }
  }
}

// One run of a simulated job at `world` ranks: the ranks read their slices in
// lockstep, one record each in turn (a rank that ran out drops out), until the
// job's position reaches `stop` (or the epoch ends). Returns the position.
uint64_t RunLockstep(const EpochPlan& plan, uint64_t stop, Ledger& ledger) {
  struct Cursor {
    size_t range = 0;
    uint64_t next = 0;
  };
  std::vector<Cursor> cursors(plan.ranks.size());
  uint64_t position = plan.position;
  bool any = true;
  while (position < stop && any) {
    any = false;
    for (size_t r = 0; r < plan.ranks.size() && position < stop; ++r) {
      const std::vector<RecordRange>& slice = plan.ranks[r];
      Cursor& c = cursors[r];
      while (c.range < slice.size() && slice[c.range].begin + c.next == slice[c.range].end) {
        ++c.range;
        c.next = 0;
      }
      if (c.range == slice.size()) continue;
      ledger.Read(slice[c.range].file, slice[c.range].begin + c.next);
      ++c.next;
      ++position;
      any = true;
    }
  }
  return position;
}

void RestartTwice(ShardMode mode, uint64_t first_stop, uint64_t second_stop) {
  const std::vector<uint64_t> counts = UnevenCounts(64, 30, 4);
  const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  const EpochPlanOptions options{.seed = 11, .mode = mode};
  EpochProgress progress{.epoch = 1};
  Ledger ledger(counts);
  // 8 ranks, stopped mid-epoch.
  absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, options, progress, 8);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(RunLockstep(*plan, first_stop, ledger), first_stop);
  progress.runs.push_back({.world_size = 8, .position = first_stop});
  // Resumed on 5 ranks, stopped again.
  plan = PlanEpoch(counts, options, progress, 5);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->position, first_stop);
  ASSERT_EQ(RunLockstep(*plan, second_stop, ledger), second_stop);
  progress.runs.push_back({.world_size = 5, .position = second_stop});
  // Resumed on 12 ranks, to the end of the epoch.
  plan = PlanEpoch(counts, options, progress, 12);
  ASSERT_TRUE(plan.ok()) << plan.status();
  if (mode == ShardMode::kRecords) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int r = 0; r < 12; ++r) {
      lo = std::min(lo, plan->RankRecords(r));
      hi = std::max(hi, plan->RankRecords(r));
    }
    EXPECT_LE(hi - lo, 1u);
  }
  EXPECT_EQ(RunLockstep(*plan, UINT64_MAX, ledger), total);
  ledger.ExpectExactlyOnce();
  // Each rank computes its own part alone: the same ranges.
  for (int r = 0; r < 12; ++r) {
    absl::StatusOr<std::vector<RecordRange>> mine = PlanRank(counts, options, progress, r, 12);
    ASSERT_TRUE(mine.ok());
    EXPECT_EQ(*mine, plan->ranks[static_cast<size_t>(r)]);
  }
}

TEST(EpochPlanTest, RestartsEightToFiveToTwelveReadEveryRecordOnce) {
  // Positions that are whole lockstep rounds (8 * 100, then 5 * 80 more) and
  // positions that are not.
  RestartTwice(ShardMode::kRecords, 800, 1200);
  RestartTwice(ShardMode::kRecords, 803, 1204);
  RestartTwice(ShardMode::kFiles, 800, 1200);
  RestartTwice(ShardMode::kFiles, 17, 1999);
  RestartTwice(ShardMode::kRecords, 0, 0);  // stopped before reading anything
}

// Ranks that consumed different amounts (echoing takes fresh records at
// uneven rates) save their own counts.
TEST(EpochPlanTest, RestartFromPerRankCounts) {
  const std::vector<uint64_t> counts = UnevenCounts(40, 25, 5);
  const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  const EpochPlanOptions options{.seed = 3};
  absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, options, {}, 4);
  ASSERT_TRUE(plan.ok());
  Ledger ledger(counts);
  const std::vector<uint64_t> consumed = {10, 0, 37, 5};
  for (size_t r = 0; r < 4; ++r) {
    uint64_t left = consumed[r];
    for (const RecordRange& range : plan->ranks[r]) {
      for (uint64_t i = range.begin; i < range.end && left > 0; ++i, --left)
        ledger.Read(range.file, i);
    }
  }
  EpochProgress progress;
  progress.runs.push_back({.world_size = 4, .position = 52, .consumed = consumed});
  plan = PlanEpoch(counts, options, progress, 3);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(RunLockstep(*plan, UINT64_MAX, ledger), total);
  ledger.ExpectExactlyOnce();
}

TEST(EpochPlanTest, MoreRanksThanRecords) {
  const std::vector<uint64_t> counts = {3, 0, 2};
  absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, {.seed = 1}, {}, 8);
  ASSERT_TRUE(plan.ok());
  Ledger ledger(counts);
  int empty = 0;
  for (int r = 0; r < 8; ++r) {
    EXPECT_LE(plan->RankRecords(r), 1u);
    empty += plan->RankRecords(r) == 0;
    for (const RecordRange& range : plan->ranks[static_cast<size_t>(r)]) ledger.ReadRange(range);
  }
  EXPECT_EQ(empty, 3);
  ledger.ExpectExactlyOnce();
}

TEST(EpochPlanTest, RejectsInconsistentProgress) {
  const std::vector<uint64_t> counts = {10, 10};
  EXPECT_EQ(PlanEpoch(counts, {}, {}, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanRank(counts, {}, {}, 2, 2).status().code(), absl::StatusCode::kInvalidArgument);
  EpochProgress past{.epoch = 0, .runs = {{.world_size = 2, .position = 21}}};
  EXPECT_THAT(PlanEpoch(counts, {}, past, 2).status().message(), HasSubstr("past the epoch"));
  EpochProgress backwards{
      .runs = {{.world_size = 2, .position = 8}, {.world_size = 3, .position = 6}}};
  EXPECT_THAT(PlanEpoch(counts, {}, backwards, 2).status().message(),
              HasSubstr("before the previous run"));
  EpochProgress wrong_sum{.runs = {{.world_size = 2, .position = 5, .consumed = {1, 1}}}};
  EXPECT_THAT(PlanEpoch(counts, {}, wrong_sum, 2).status().message(), HasSubstr("sums to 2"));
  EpochProgress too_many{.runs = {{.world_size = 2, .position = 12, .consumed = {11, 1}}}};
  EXPECT_THAT(PlanEpoch(counts, {}, too_many, 2).status().message(),
              HasSubstr("rank 0 consumed 11"));
  EXPECT_EQ(ParseShardMode("bytes").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseShardMode("files"), ShardMode::kFiles);
}

// A world size near 2^31 (this run's or a restart's) is refused before a
// table of that many ranks is allocated; the largest accepted plans.
TEST(EpochPlanTest, WorldSizeAboveTheMaximumIsInvalidArgument) {
  const std::vector<uint64_t> counts = {10, 10};
  for (int world_size : {ShardOptions::kMaxWorldSize + 1, INT_MAX - 1, INT_MAX}) {
    absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, {}, {}, world_size);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << world_size;
    EXPECT_THAT(plan.status().message(), HasSubstr("ShardOptions::kMaxWorldSize"));
    EXPECT_EQ(PlanRank(counts, {}, {}, 0, world_size).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  EpochProgress restart{.epoch = 4, .runs = {{.world_size = INT_MAX - 1, .position = 0}}};
  absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, {}, restart, 2);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("epoch 4 run 0: epoch plan: world_size must be"));
  absl::StatusOr<std::vector<RecordRange>> last =
      PlanRank(counts, {}, {}, ShardOptions::kMaxWorldSize - 1, ShardOptions::kMaxWorldSize);
  ASSERT_TRUE(last.ok()) << last.status();
  ASSERT_EQ(last->size(), 1u);  // 20 records over 2^20 ranks: the last has one
  EXPECT_EQ(last->front().size(), 1u);
}

// Record counts whose sum overflows 64 bits: the wrapped sum wrote past the
// rank table (a segfault) or gave every rank nothing with an OK status.
TEST(EpochPlanTest, RecordCountsWhoseSumOverflowsAreInvalidArgument) {
  const uint64_t half = uint64_t{1} << 63;
  for (ShardMode mode : {ShardMode::kRecords, ShardMode::kFiles}) {
    for (const std::vector<uint64_t>& counts :
         std::vector<std::vector<uint64_t>>{{half, half}, {UINT64_MAX, 2}, {5, UINT64_MAX, 7}}) {
      absl::StatusOr<EpochPlan> plan = PlanEpoch(counts, {.mode = mode}, {}, 4);
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << counts[1];
      EXPECT_THAT(plan.status().message(), HasSubstr("the record counts overflow 64 bits"));
    }
  }
  // The largest sum that fits still plans, balanced to one record.
  const std::vector<uint64_t> largest = {UINT64_MAX - 5, 5};
  absl::StatusOr<EpochPlan> full = PlanEpoch(largest, {}, {}, 2);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->total_records, UINT64_MAX);
  EXPECT_EQ(full->RankRecords(0) + full->RankRecords(1), UINT64_MAX);
  EXPECT_LE(full->RankRecords(1) - full->RankRecords(0), 1u);
  // A restart of one rank whose slice is all 2^64 - 1 records (the lockstep
  // search looped forever on a level range of 2^64).
  const std::vector<uint64_t> one = {UINT64_MAX};
  EpochProgress stopped{.runs = {{.world_size = 1, .position = 6}}};
  absl::StatusOr<EpochPlan> resumed = PlanEpoch(one, {}, stopped, 3);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->position, 6u);
  EXPECT_EQ(resumed->RankRecords(0) + resumed->RankRecords(1) + resumed->RankRecords(2),
            UINT64_MAX - 6);
  EXPECT_EQ(resumed->ranks[0].front().begin, 6u);
}

}  // namespace
}  // namespace dataecho
