// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The C++ parts of the Python binding that need no interpreter: the Puller
// (python/src/puller.h) that next() waits on, and the ShardStage behind
// Pipeline.shard(). They run in every build, sanitizers included.
#include "puller.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "dataecho/pipeline.h"
#include "dataecho/shuffle.h"
#include "dataecho/source.h"
#include "gtest/gtest.h"
#include "shard_stage.h"
#include "support/examples.h"
#include "support/gated_sources.h"

namespace dataecho::python {
namespace {

using testing::GatedSource;
using testing::MakeExample;
using testing::MakeExamples;

// Pops until an item arrives (a gated source decides when).
Puller<Example>::Item PopBlocking(Puller<Example>& puller) {
  while (true) {
    std::optional<Puller<Example>::Item> item = puller.Pop(absl::Milliseconds(10));
    if (item.has_value()) return *std::move(item);
  }
}

TEST(PullerTest, ElementsInOrderThenAStickyEnd) {
  Puller<Example> puller(*VectorSource(MakeExamples(5)));
  for (uint64_t i = 0; i < 5; ++i) {
    Puller<Example>::Item item = PopBlocking(puller);
    ASSERT_TRUE(item.ok() && item->has_value());
    EXPECT_EQ((*item)->source_index, i);
  }
  for (int i = 0; i < 2; ++i) {
    Puller<Example>::Item end = PopBlocking(puller);
    ASSERT_TRUE(end.ok());
    EXPECT_FALSE(end->has_value());
  }
  std::vector<StageStats> stats;
  puller.AppendStats(&stats);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats.back().name, "python");
  EXPECT_EQ(stats.back().elements, 5);
}

TEST(PullerTest, PopTimesOutUntilTheElementIsReadyAndRunsOneAhead) {
  auto gated = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* source = gated.get();
  Puller<Example> puller(std::move(gated), {}, /*max_ahead=*/1);
  source->AwaitWaiting(1);  // the pulling thread waits for the first element
  EXPECT_FALSE(puller.Pop(absl::ZeroDuration()).has_value());
  source->Push(MakeExample(7));
  source->Push(MakeExample(8));
  source->Push(MakeExample(9));
  EXPECT_EQ((*PopBlocking(puller))->source_index, 7u);
  EXPECT_LE(source->taken(), 2);  // at most one element ahead of the consumer
  EXPECT_EQ((*PopBlocking(puller))->source_index, 8u);
  EXPECT_EQ((*PopBlocking(puller))->source_index, 9u);
  EXPECT_EQ(source->taken(), 3);
}

TEST(PullerTest, KeepsPullingWhileTheConsumerHoldsAnElement) {
  // With kPullAhead slots the pulling thread goes on after handing out an
  // element: it takes kPullAhead elements before the consumer pops any, and
  // asks for the next one as soon as the consumer took one.
  ASSERT_GE(kPullAhead, 2u);
  auto gated = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* source = gated.get();
  Puller<Example> puller(std::move(gated));
  for (size_t i = 0; i < kPullAhead; ++i) {
    source->AwaitWaiting(1);  // it waits in Next() for element i, none popped yet
    source->Push(MakeExample(i));
    while (source->taken() < static_cast<int64_t>(i + 1)) absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ((*PopBlocking(puller))->source_index, 0u);
  source->AwaitWaiting(1);  // room again: it waits for element kPullAhead
  source->Push(MakeExample(kPullAhead));
  for (uint64_t i = 1; i <= kPullAhead; ++i) {
    EXPECT_EQ((*PopBlocking(puller))->source_index, i);
  }
  EXPECT_EQ(source->taken(), static_cast<int64_t>(kPullAhead + 1));
}

TEST(PullerTest, AnErrorComesInOrderAndStays) {
  auto gated = std::make_unique<GatedSource<Example>>();
  gated->Push(MakeExample(1));
  gated->Push(absl::DataLossError("corrupted record at x:12"));
  Puller<Example> puller(std::move(gated));
  EXPECT_TRUE(PopBlocking(puller).ok());
  EXPECT_EQ(PopBlocking(puller).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(PopBlocking(puller).status().code(), absl::StatusCode::kDataLoss);
}

TEST(PullerTest, CancelWakesAWaitingPop) {
  auto gated = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* source = gated.get();
  Puller<Example> puller(std::move(gated));
  source->AwaitWaiting(1);
  std::thread canceller([&] { puller.Cancel(); });
  // A long slice: only Cancel() can end it early.
  std::optional<Puller<Example>::Item> item = puller.Pop(absl::Hours(1));
  canceller.join();
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status().code(), absl::StatusCode::kCancelled);
}

TEST(PullerTest, AWaitingPopTakesTheOneElementThatComesWhenNoOtherFollows) {
  // A waiting Pop() first waits for all slots but one (two of three here),
  // but only for as long as the pipeline's pace says they come: the one
  // element that comes while the source then stalls is handed out, in order,
  // long before the slice ends.
  auto gated = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* source = gated.get();
  for (uint64_t i = 0; i < 3; ++i) source->Push(MakeExample(i));  // a fast pace
  Puller<Example> puller(std::move(gated));
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ((*PopBlocking(puller))->source_index, i);
  source->AwaitWaiting(1);  // nothing ready: the next Pop() waits
  std::thread pusher([&] {
    absl::SleepFor(absl::Milliseconds(20));  // (ordering only) Pop() waits first
    source->Push(MakeExample(3));
  });
  std::optional<Puller<Example>::Item> item = puller.Pop(absl::Hours(1));
  pusher.join();
  ASSERT_TRUE(item.has_value());
  ASSERT_TRUE(item->ok());
  EXPECT_EQ((**item)->source_index, 3u);
  // The end wakes a Pop() waiting for more than one element too.
  std::thread ender([&] { source->PushEnd(); });
  std::optional<Puller<Example>::Item> end = puller.Pop(absl::Hours(1));
  ender.join();
  ASSERT_TRUE(end.has_value() && end->ok());
  EXPECT_FALSE(end->value().has_value());
}

TEST(PullerTest, ShutdownWhileTheUpstreamIsBlockedJoinsAndKeepsNoStages) {
  auto gated = std::make_unique<GatedSource<Example>>();
  GatedSource<Example>* source = gated.get();
  Puller<Example> puller(std::move(gated));
  source->AwaitWaiting(1);
  puller.Shutdown();  // cancels the source, joins the thread, destroys the stages
  puller.Shutdown();  // idempotent
  std::vector<StageStats> stats;
  puller.AppendStats(&stats);
  ASSERT_EQ(stats.size(), 1u);  // only the puller's own row is left
  EXPECT_EQ(puller.Pop(absl::ZeroDuration())->status().code(), absl::StatusCode::kCancelled);
}

// A chain whose state holds references: examples -> shuffle(4).
StagePtr<Example> ShuffledExamples(int n) {
  return *ShuffleStage<Example>::Make(*VectorSource(MakeExamples(n)),
                                      ShuffleOptions{.buffer_size = 4, .seed = 3});
}

std::vector<uint64_t> PopAll(Puller<Example>& puller) {
  std::vector<uint64_t> out;
  while (true) {
    Puller<Example>::Item item = PopBlocking(puller);
    EXPECT_TRUE(item.ok()) << item.status();
    if (!item.ok() || !item->has_value()) return out;
    out.push_back((*item)->source_index);
  }
}

// Restores `state` as the Python module does: a Pipeline restores the chain,
// the puller reads its own section; `stage` is the chain again unless the
// restore failed half-way.
absl::Status RestoreInto(StagePtr<Example>& stage, std::string_view state,
                         std::vector<Example>* ahead) {
  Pipeline<Example> p(std::move(stage));
  const absl::Status s = p.RestoreStateWith(state, Puller<Example>::kSection,
                                            [&](Stage<Example>& last, StateReader& r) {
                                              return Puller<Example>::ReadAhead(last, r, ahead);
                                            });
  absl::StatusOr<StagePtr<Example>> back = std::move(p).Release();
  if (back.ok()) stage = *std::move(back);
  return s;
}

TEST(PullerTest, StateIsBehindWhatPopReturnedWithTheElementPulledAhead) {
  Puller<Example> whole(ShuffledExamples(12));
  const std::vector<uint64_t> expected = PopAll(whole);
  ASSERT_EQ(expected.size(), 12u);
  for (size_t taken : {0u, 1u, 5u, 11u, 12u}) {
    Puller<Example> first(ShuffledExamples(12));
    for (size_t i = 0; i < taken; ++i) {
      EXPECT_EQ((*PopBlocking(first))->source_index, expected[i]);
    }
    // Saved twice: the pulling thread may or may not have pulled ahead; the
    // state is the same position either way, and saving changes nothing.
    absl::StatusOr<std::string> state = first.SaveState();
    ASSERT_TRUE(state.ok()) << state.status();
    ASSERT_TRUE(first.SaveState().ok());
    StagePtr<Example> again = ShuffledExamples(12);
    std::vector<Example> ahead;
    ASSERT_TRUE(RestoreInto(again, *state, &ahead).ok());
    Puller<Example> resumed(std::move(again), std::move(ahead));
    std::vector<uint64_t> rest = PopAll(resumed);
    EXPECT_EQ(rest, std::vector<uint64_t>(expected.begin() + static_cast<ptrdiff_t>(taken),
                                          expected.end()))
        << "after " << taken;
    EXPECT_EQ(PopAll(first), rest);  // the saved puller goes on as well
  }
}

// Elements the shuffle stage of ShuffledExamples() emitted (its stats row).
int64_t Emitted(const Puller<Example>& puller) {
  std::vector<StageStats> stats;
  puller.AppendStats(&stats);
  EXPECT_EQ(stats.size(), 3u);  // vector, shuffle, python
  return stats.size() == 3 ? stats[1].elements : INT64_MAX;
}

TEST(PullerTest, EveryElementPulledAheadIsInTheStateInOrder) {
  Puller<Example> whole(ShuffledExamples(12));
  const std::vector<uint64_t> expected = PopAll(whole);
  ASSERT_EQ(expected.size(), 12u);
  for (size_t max_ahead : {1u, 2u, 3u, 5u}) {
    for (size_t taken : {0u, 2u, 9u, 11u}) {
      Puller<Example> first(ShuffledExamples(12), {}, max_ahead);
      for (size_t i = 0; i < taken; ++i) {
        EXPECT_EQ((*PopBlocking(first))->source_index, expected[i]);
      }
      // The pulling thread fills its slots (or reaches the end).
      const auto full = static_cast<int64_t>(std::min<size_t>(taken + max_ahead, 12));
      while (Emitted(first) < full) absl::SleepFor(absl::Milliseconds(1));
      absl::StatusOr<std::string> state = first.SaveState();
      ASSERT_TRUE(state.ok()) << state.status();
      StagePtr<Example> again = ShuffledExamples(12);
      std::vector<Example> ahead;
      ASSERT_TRUE(RestoreInto(again, *state, &ahead).ok());
      // Exactly the slots: never more elements ahead than max_ahead.
      ASSERT_EQ(ahead.size(), static_cast<size_t>(full) - taken)
          << "max_ahead " << max_ahead << ", after " << taken;
      for (size_t i = 0; i < ahead.size(); ++i) {
        EXPECT_EQ(ahead[i].source_index, expected[taken + i]);
      }
      // A puller of another depth hands them out first, then goes on.
      Puller<Example> resumed(std::move(again), std::move(ahead), 1 + max_ahead % 3);
      EXPECT_EQ(
          PopAll(resumed),
          std::vector<uint64_t>(expected.begin() + static_cast<ptrdiff_t>(taken), expected.end()));
    }
  }
}

TEST(PullerTest, AStateOfTheFirstFormatRestores) {
  // The first format wrote Bool(an element is ahead) where the count is now:
  // the same varint for 0 or 1.
  Puller<Example> whole(ShuffledExamples(8));
  const std::vector<uint64_t> expected = PopAll(whole);
  StagePtr<Example> saved = ShuffledExamples(8);
  ASSERT_EQ((*saved->Next())->source_index, expected[0]);         // Python took it
  absl::StatusOr<std::optional<Example>> pulled = saved->Next();  // pulled ahead
  ASSERT_TRUE(pulled.ok() && pulled->has_value());
  StateWriter w;
  ASSERT_TRUE(saved->SaveState(w).ok());
  w.BeginStage(Puller<Example>::kSection, 0);
  w.Bool(true);
  const Example* item = &**pulled;
  ASSERT_TRUE(saved->SaveRefs(std::span<const Example* const>(&item, 1), w).ok());
  StagePtr<Example> chain = ShuffledExamples(8);
  std::vector<Example> ahead;
  ASSERT_TRUE(RestoreInto(chain, w.Finish(), &ahead).ok());
  ASSERT_EQ(ahead.size(), 1u);
  EXPECT_EQ(ahead[0].source_index, expected[1]);
  Puller<Example> resumed(std::move(chain), std::move(ahead));
  EXPECT_EQ(PopAll(resumed), std::vector<uint64_t>(expected.begin() + 1, expected.end()));
}

TEST(PullerTest, RestoreRejectsAnotherPipelinesOrADamagedState) {
  Puller<Example> first(ShuffledExamples(6));
  ASSERT_TRUE(PopBlocking(first).ok());
  const std::string state = *first.SaveState();
  std::vector<Example> ahead;
  StagePtr<Example> other = *VectorSource(MakeExamples(6));  // no shuffle: another shape
  EXPECT_EQ(RestoreInto(other, state, &ahead).code(), absl::StatusCode::kInvalidArgument);
  StagePtr<Example> same = ShuffledExamples(6);
  EXPECT_EQ(RestoreInto(same, state.substr(0, state.size() - 3), &ahead).code(),
            absl::StatusCode::kDataLoss);
  std::string flipped = state;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_EQ(RestoreInto(same, flipped, &ahead).code(), absl::StatusCode::kDataLoss);
}

TEST(ShardStageTest, StartsOverAndResumesWhereItWas) {
  auto make = [] {
    return *ShardStage<Example>::Make(*VectorSource(MakeExamples(10)), Shard{1, 3, "options"});
  };
  StagePtr<Example> shard = make();
  ASSERT_TRUE(shard->EnableRestart().ok());
  ASSERT_EQ((*shard->Next())->source_index, 1u);
  StateWriter w;
  ASSERT_TRUE(shard->SaveState(w).ok());
  const std::string state = w.Finish();
  ASSERT_EQ((*shard->Next())->source_index, 4u);
  // Epoch 1: from the start again, its elements carry the epoch.
  ASSERT_TRUE(shard->Restart(1).ok());
  absl::StatusOr<std::vector<Example>> epoch1 = testing::Drain(*shard);
  ASSERT_TRUE(epoch1.ok());
  ASSERT_EQ(epoch1->size(), 3u);
  EXPECT_EQ((*epoch1)[0].source_index, 1u);
  EXPECT_EQ((*epoch1)[2].source_index, 7u);
  EXPECT_EQ((*epoch1)[2].epoch, 1u);
  // A new chain restored from the state goes on after element 1.
  StagePtr<Example> resumed = make();
  absl::StatusOr<StateReader> r = StateReader::Parse(state);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(resumed->RestoreState(*r).ok());
  absl::StatusOr<std::vector<Example>> rest = testing::Drain(*resumed);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[0].source_index, 4u);
  EXPECT_EQ((*rest)[1].source_index, 7u);
}

TEST(ShardStageTest, KeepsEveryWorldSizethElementFromRank) {
  for (int rank = 0; rank < 3; ++rank) {
    absl::StatusOr<StagePtr<Example>> shard =
        ShardStage<Example>::Make(*VectorSource(MakeExamples(10)), Shard{rank, 3, "options"});
    ASSERT_TRUE(shard.ok());
    absl::StatusOr<std::vector<Example>> got = testing::Drain(**shard);
    ASSERT_TRUE(got.ok());
    std::vector<uint64_t> indices;
    for (const Example& e : *got) indices.push_back(e.source_index);
    std::vector<uint64_t> expected;
    for (uint64_t i = static_cast<uint64_t>(rank); i < 10; i += 3) expected.push_back(i);
    EXPECT_EQ(indices, expected);
  }
}

TEST(ShardStageTest, RejectsARankOutsideTheWorld) {
  absl::StatusOr<StagePtr<Example>> bad =
      ShardStage<Example>::Make(*VectorSource(MakeExamples(1)), Shard{2, 2, "options"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShardStage<Example>::Make(nullptr, Shard{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dataecho::python
