// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Checkpoints of EchoPlacement::kAuto (docs/checkpoint.md, "Adaptive and auto
// echo"): the placed echoes' factors depend on timing, so a restored pipeline
// is not compared with an uninterrupted run as a whole. What holds: every
// record of the epoch is fresh exactly once across the save; the elements
// made with the decisions the state carries (up to the next decision of
// either run) are the original's, element by element; damaged states fail.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "dataecho/checkpoint.h"
#include "dataecho/echo_placement.h"
#include "dataecho/internal/decision_journal.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/resume_check.h"

namespace dataecho {
namespace {

constexpr int64_t kBytes = 4;
constexpr int64_t kBatch = 4;
constexpr int64_t kDecideEvery = 4;

// The test's augmentation: the repeat index stamped into the bytes.
absl::StatusOr<Example> Augment(Example e) { return testing::StampRepeat(std::move(e), kBytes); }

// A slow upstream (so that the planner echoes), the auto placement on top.
Pipeline<Batch> Build(int64_t items) {
  Pipeline<Example> decoded = FromVector(testing::MakeExamples(items, kBytes))
                                  .Map([](Example e) -> absl::StatusOr<Example> {
                                    absl::SleepFor(absl::Microseconds(150));
                                    return e;
                                  })
                                  .Prefetch({.depth = 8});
  return EchoedBatches(
      std::move(decoded), Augment,
      {.placement = EchoPlacement::kAuto,
       .shuffle = {.buffer_size = 8, .seed = 2},
       .batch = {.batch_size = kBatch},
       .prefetch = {.depth = 4},
       .auto_placement = {
           .max_factor = 3, .pipeline_cores = 1, .decide_every = kDecideEvery, .seed = 5}});
}

// Source indices of the fresh rows (fresh batch, fresh example) of `b`.
void AddFresh(const Batch& b, std::vector<int64_t>* fresh) {
  if (!b.fresh()) return;
  for (int64_t i = 0; i < b.num_rows; ++i) {
    if (b.repeat_indices.data<int32_t>()[i] == 0)
      fresh->push_back(b.source_indices.data<int64_t>()[i]);
  }
}

// The batch counts at which the planner decided (its notes: "after N batches: ...").
std::vector<int64_t> Decisions(const Pipeline<Batch>& p) {
  std::vector<int64_t> out;
  for (const StageStats& s : p.Stats()) {
    if (s.name != "echo_planner") continue;
    for (const std::string& note : s.notes) {
      long long n = 0;  // NOLINT(google-runtime-int): sscanf's %lld
      if (std::sscanf(note.c_str(), "after %lld batches", &n) == 1) out.push_back(n);
    }
  }
  return out;
}

struct Drained {
  std::vector<std::string> keys;
  std::vector<int64_t> fresh;
  std::vector<int64_t> decisions;
};
Drained Drain(Pipeline<Batch>& p) {
  Drained d;
  while (true) {
    absl::StatusOr<std::optional<Batch>> b = p.Next();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok() || !b->has_value()) break;
    d.keys.push_back(testing::Key(**b));
    AddFresh(**b, &d.fresh);
  }
  d.decisions = Decisions(p);
  return d;
}

// Every record of `items` fresh exactly once across a save after `at`
// batches: `before` it, or `after` the restore.
void ExpectEveryRecordFreshOnce(const std::vector<int64_t>& before,
                                const std::vector<int64_t>& after, int64_t items, size_t at) {
  std::vector<int64_t> all = before;
  all.insert(all.end(), after.begin(), after.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(static_cast<size_t>(items));
  for (int64_t i = 0; i < items; ++i) expected[static_cast<size_t>(i)] = i;
  EXPECT_EQ(all, expected) << "saved after " << at << " batches";
}

// A state of `make()` saved after `batches` batches, a bit flipped (the
// checksum made valid again): the restore fails or the pipeline ends, never
// a crash or a spin.
void ExpectFlippedStatesFailOrEnd(const std::function<Pipeline<Batch>()>& make, int batches) {
  Pipeline<Batch> a = make();
  for (int i = 0; i < batches; ++i) ASSERT_TRUE(a.Next().ok());
  absl::StatusOr<std::string> state = a.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  testing::CheckFlippedStatesEnd<Batch>(make, *state, 60);
  // A truncated state is DATA_LOSS.
  Pipeline<Batch> b = make();
  EXPECT_EQ(b.RestoreState(state->substr(0, state->size() - 9)).code(),
            absl::StatusCode::kDataLoss);
}

TEST(CheckpointAutoPlacementTest, EveryRecordFreshOnceAndReplayedDecisionsResume) {
  constexpr int64_t kItems = 240;
  constexpr int kMaxAt = 50;  // at least 60 batches come, echoed or not
  std::mt19937 rng(11);
  int64_t compared = 0;
  int64_t echoed = 0;
  for (int trial = 0; trial < 8; ++trial) {
    // A position from the start to well past the first decisions; or (odd
    // trials) a few batches after the first decision, while the batches in
    // flight were made before it (the factors the state must replay).
    size_t at = static_cast<size_t>(std::uniform_int_distribution<int>(0, kMaxAt)(rng));
    const bool after_decision = trial % 2 == 1;
    std::vector<int64_t> fresh;
    std::vector<std::string> before;
    std::string state;
    Drained original;
    {
      Pipeline<Batch> a = Build(kItems);
      ASSERT_TRUE(a.status().ok()) << a.status();
      bool decided = false;
      if (after_decision) at = kMaxAt;  // a few batches after the first decision
      for (size_t i = 0; i < at; ++i) {
        if (after_decision && !decided && !Decisions(a).empty()) {
          decided = true;
          at = i + static_cast<size_t>(trial / 2);
          if (i == at) break;
        }
        absl::StatusOr<std::optional<Batch>> b = a.Next();
        ASSERT_TRUE(b.ok() && b->has_value()) << "at " << i;
        before.push_back(testing::Key(**b));
        const size_t had = fresh.size();
        AddFresh(**b, &fresh);
        echoed += (*b)->num_rows - static_cast<int64_t>(fresh.size() - had);  // copies
      }
      absl::StatusOr<std::string> saved = a.SaveState();
      ASSERT_TRUE(saved.ok()) << saved.status() << " at " << at;
      state = *saved;
      original = Drain(a);  // read on after the save
    }                       // destroyed
    Pipeline<Batch> b = Build(kItems);
    absl::Status restored = b.RestoreState(state);
    ASSERT_TRUE(restored.ok()) << restored << " at " << at;
    const Drained resumed = Drain(b);
    // Every record exactly once, fresh, across the save.
    ExpectEveryRecordFreshOnce(fresh, resumed.fresh, kItems, at);
    // Up to the next decision of either run (the original's after the save,
    // the restored one's first), the decisions are the state's: the same
    // elements.
    auto next = std::upper_bound(original.decisions.begin(), original.decisions.end(),
                                 static_cast<int64_t>(at));
    size_t same = original.keys.size();
    if (next != original.decisions.end()) same = static_cast<size_t>(*next) - at;
    if (!resumed.decisions.empty())
      same = std::min(same, static_cast<size_t>(resumed.decisions[0]));
    same = std::min({same, original.keys.size(), resumed.keys.size()});
    for (size_t i = 0; i < same; ++i) {
      ASSERT_EQ(resumed.keys[i], original.keys[i]) << "element " << i << " after a save at " << at;
    }
    compared += static_cast<int64_t>(same);
  }
  EXPECT_GT(compared, 0);
  std::printf("compared %lld batches; %lld copies before the saves\n",
              static_cast<long long>(compared), static_cast<long long>(echoed));  // NOLINT
}

// A state whose decisions say nonsense: never a crash or a spin.
TEST(CheckpointAutoPlacementTest, FlippedStatesFailOrEnd) {
  ExpectFlippedStatesFailOrEnd([] { return Build(48); }, 30);
}

// The planner writes its decisions before its input's sections: a state of
// a fixed placement is another shape.
TEST(CheckpointAutoPlacementTest, OtherShapeIsInvalidArgument) {
  Pipeline<Batch> a = Build(16);
  absl::StatusOr<std::string> state = a.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  Pipeline<Batch> fixed = EchoedBatches(FromVector(testing::MakeExamples(16, kBytes)), Augment,
                                        {.placement = EchoPlacement::kBatch,
                                         .echo = {.factor = 2, .seed = 1},
                                         .batch = {.batch_size = kBatch}});
  EXPECT_EQ(fixed.RestoreState(*state).code(), absl::StatusCode::kInvalidArgument);
}

// The adaptive placement: its adaptive echo decides fresh or repeat from
// timing, below the consumer's Prefetch; the planner carries the decisions
// taken after the Prefetch's snapshot (internal/decision_journal.h), so the
// restored Prefetch makes its batches in flight again as they were.
Pipeline<Batch> BuildAdaptive(int64_t items) {
  Pipeline<Example> decoded = FromVector(testing::MakeExamples(items, kBytes))
                                  .Map([](Example e) -> absl::StatusOr<Example> {
                                    absl::SleepFor(absl::Microseconds(150));
                                    return e;
                                  })
                                  .Prefetch({.depth = 8});
  return EchoedBatches(std::move(decoded), Augment,
                       {.placement = EchoPlacement::kAdaptive,
                        .adaptive = {.max_factor = 3, .pool_size = 8, .seed = 1},
                        .shuffle = {.buffer_size = 8, .seed = 2},
                        .batch = {.batch_size = kBatch},
                        .prefetch = {.depth = 4},
                        .auto_placement = {.pipeline_cores = 1, .decide_every = kDecideEvery}});
}

// Saved anywhere, it restores (the batches made again after the snapshot are
// checked against the ones the consumer took: without the journal the
// restored echo decided afresh and they differed), every record is fresh
// exactly once across the save, and the batches the original had made ahead
// come again first.
TEST(CheckpointAutoPlacementTest, AdaptivePlacementResumesWithEveryRecordFreshOnce) {
  constexpr int64_t kItems = 160;
  std::mt19937 rng(7);
  int64_t same_total = 0;
  int64_t repeats = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const auto at = static_cast<size_t>(std::uniform_int_distribution<int>(0, 40)(rng));
    std::vector<int64_t> fresh;
    std::string state;
    Drained original;
    {
      Pipeline<Batch> a = BuildAdaptive(kItems);
      ASSERT_TRUE(a.status().ok()) << a.status();
      for (size_t i = 0; i < at; ++i) {
        absl::StatusOr<std::optional<Batch>> b = a.Next();
        ASSERT_TRUE(b.ok() && b->has_value()) << "at " << i;
        const size_t had = fresh.size();
        AddFresh(**b, &fresh);
        repeats += (*b)->num_rows - static_cast<int64_t>(fresh.size() - had);
      }
      absl::StatusOr<std::string> saved = a.SaveState();
      ASSERT_TRUE(saved.ok()) << saved.status() << " at " << at;
      state = *saved;
      original = Drain(a);
    }
    Pipeline<Batch> b = BuildAdaptive(kItems);
    absl::Status restored = b.RestoreState(state);
    ASSERT_TRUE(restored.ok()) << restored << " at " << at;
    const Drained resumed = Drain(b);
    ExpectEveryRecordFreshOnce(fresh, resumed.fresh, kItems, at);
    size_t same = 0;
    while (same < original.keys.size() && same < resumed.keys.size() &&
           original.keys[same] == resumed.keys[same])
      ++same;
    same_total += static_cast<int64_t>(same);
  }
  EXPECT_GT(repeats, 0);  // the echo repeated: its decisions were not all "fresh"
  EXPECT_GT(same_total, 0);
  std::printf("%lld batches as the original's first after the restores; %lld repeats\n",
              static_cast<long long>(same_total), static_cast<long long>(repeats));  // NOLINT
}

TEST(CheckpointAutoPlacementTest, AdaptivePlacementFlippedStatesFailOrEnd) {
  ExpectFlippedStatesFailOrEnd([] { return BuildAdaptive(48); }, 10);
}

// The journal keeps the decisions from the oldest snapshot still held, and
// nothing when none is; a restored echo replays from its own position.
TEST(DecisionJournalTest, KeepsFromTheOldestAnchorAndReplaysFromThePosition) {
  internal::DecisionJournal journal;
  for (int i = 0; i < 10000; ++i) journal.Record('F');
  EXPECT_LT(journal.kept(), 4096U);  // no snapshot: nothing can need them (trimmed in steps)
  std::shared_ptr<const void> older = journal.Anchor(10000);
  EXPECT_EQ(journal.kept(), 0U);
  for (int i = 0; i < 6000; ++i) journal.Record(i % 3 == 0 ? 'F' : 'R');
  std::shared_ptr<const void> newer = journal.Anchor(16000);
  for (int i = 0; i < 5; ++i) journal.Record('R');
  EXPECT_EQ(journal.kept(), 6005U);
  older.reset();
  for (int i = 0; i < 5000; ++i) journal.Record('F');
  EXPECT_EQ(journal.kept(), 5005U);  // from the newer anchor on

  StateWriter w;
  w.BeginStage("planner", 1);
  journal.Save(w);
  absl::StatusOr<StateReader> r = StateReader::Parse(w.Finish());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->BeginStage("planner").ok());
  internal::DecisionJournal restored;
  ASSERT_TRUE(restored.Restore(*r, "planner").ok());
  absl::StatusOr<std::string> replay = restored.ReplayFrom(16003, "echo");
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->substr(0, 3), "RRF");
  EXPECT_EQ(replay->size(), 5002U);
  // A position the journal does not hold: DATA_LOSS naming the stage.
  absl::StatusOr<StateReader> again = StateReader::Parse(w.Finish());
  ASSERT_TRUE(again.ok() && again->BeginStage("planner").ok());
  ASSERT_TRUE(restored.Restore(*again, "planner").ok());
  absl::StatusOr<std::string> before = restored.ReplayFrom(15000, "echo");
  EXPECT_EQ(before.status().code(), absl::StatusCode::kDataLoss) << before.status();
  EXPECT_NE(before.status().message().find("echo"), std::string::npos);
}

}  // namespace
}  // namespace dataecho
