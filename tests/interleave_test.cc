// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Interleave: tf.data's order (cycle_length, block_length, a finished input
// replaced in its slot), only cycle_length inputs open, an absurd
// cycle_length, errors in order and sticky, cancellation of a blocked open
// input.
#include "dataecho/interleave.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/gated_sources.h"

namespace dataecho {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::vector<int64_t> ReadAll(Pipeline<int64_t>& p) {
  std::vector<int64_t> out;
  for (int64_t x : p) out.push_back(x);
  EXPECT_TRUE(p.status().ok()) << p.status();
  return out;
}

TEST(InterleaveTest, MatchesTfDataOrder) {
  // tf.data's documented example:
  //   Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
  //                                  cycle_length=2, block_length=4)
  auto p =
      FromRange(1, 6).Interleave([](int64_t x) { return FromVector(std::vector<int64_t>(6, x)); },
                                 {.cycle_length = 2, .block_length = 4});
  EXPECT_THAT(ReadAll(p), ElementsAreArray<int64_t>({1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                                     3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5}));
}

TEST(InterleaveTest, PipelinesOfUnequalLengthRoundRobin) {
  std::vector<Pipeline<int64_t>> inputs;
  inputs.push_back(FromRange(0, 3));    // 0 1 2
  inputs.push_back(FromRange(10, 11));  // 10
  inputs.push_back(FromRange(20, 24));  // 20 21 22 23
  inputs.push_back(FromRange(30, 32));  // 30 31
  auto p = Interleave(std::move(inputs), {.cycle_length = 3});
  // 10's pipeline ends at its second turn, which passes to the next slot; the
  // fourth pipeline opens in its slot when the cycle comes back (tf.data's rule).
  EXPECT_THAT(ReadAll(p), ElementsAre(0, 10, 20, 1, 21, 2, 30, 22, 31, 23));
  const std::vector<StageStats> stats = p.Stats();
  EXPECT_EQ(stats.back().name, "interleave");
  EXPECT_EQ(stats.back().elements, 10);
  EXPECT_EQ(stats.back().Extra("opened"), 4);
  EXPECT_EQ(stats.back().Extra("open"), 0);
}

TEST(InterleaveTest, OpensOnlyCycleLengthInputsAtATime) {
  auto opened = std::make_shared<std::vector<int64_t>>();
  auto p = FromRange(0, 10).Interleave(
      [opened](int64_t x) {
        opened->push_back(x);
        return FromRange(x * 100, x * 100 + 5);
      },
      {.cycle_length = 3, .block_length = 2});
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(p.Next().ok());  // two from each of three
  EXPECT_THAT(*opened, ElementsAre(0, 1, 2));
  EXPECT_EQ(p.Stats().back().Extra("open"), 3);
}

TEST(InterleaveTest, ErrorsComeInOrderAndStay) {
  // An open pipeline fails after two elements.
  auto p = FromRange(0, 3).Interleave([](int64_t x) -> Pipeline<int64_t> {
    if (x != 1) return FromRange(x * 10, x * 10 + 3);
    return FromGenerator<int64_t>(
        [i = int64_t{0}]() mutable -> absl::StatusOr<std::optional<int64_t>> {
          if (i == 2) return absl::DataLossError("corrupt record in input 1");
          return 10 + i++;
        });
  });
  auto stage = std::move(p).Release();
  ASSERT_TRUE(stage.ok());
  auto [items, status] = testing::DrainWithStatus(**stage);
  EXPECT_THAT(items, ElementsAre(0, 10, 1, 11, 2));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ((*stage)->Next().status().code(), absl::StatusCode::kDataLoss);

  // fn returns a pipeline that failed to build: its error, when it is opened.
  auto bad = FromRange(0, 3).Interleave([](int64_t x) {
    return FromRange(0, 2).Shuffle({.buffer_size = x == 1 ? 0 : 4, .seed = 1});
  });
  std::vector<int64_t> seen;
  for (int64_t v : bad) seen.push_back(v);
  EXPECT_EQ(seen.size(), 1u);  // one element of input 0, then input 1 is opened
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("buffer_size"));
}

TEST(InterleaveTest, RejectsBadOptions) {
  auto identity = [](int64_t x) { return FromRange(0, x); };
  EXPECT_EQ(FromRange(0, 3).Interleave(identity, {.cycle_length = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromRange(0, 3).Interleave(identity, {.block_length = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto null_fn = InterleaveStage<int64_t, int64_t>::Make(*RangeSource(0, 3), nullptr, {});
  EXPECT_EQ(null_fn.status().code(), absl::StatusCode::kInvalidArgument);
}

// A cycle_length above the number of inputs opens them all, in the order of
// cycle_length = inputs; its slots are made as inputs open, never up front
// (INT64_MAX slots were allocated, and aborted, before anything was read).
TEST(InterleaveTest, CycleLengthAboveTheInputsCostsNothing) {
  auto make = [](int64_t cycle_length) {
    std::vector<Pipeline<int64_t>> inputs;
    inputs.push_back(FromRange(0, 3));    // 0 1 2
    inputs.push_back(FromRange(10, 11));  // 10
    inputs.push_back(FromRange(20, 24));  // 20 21 22 23
    inputs.push_back(FromRange(30, 32));  // 30 31
    return Interleave(std::move(inputs), {.cycle_length = cycle_length});
  };
  auto four = make(4);
  const std::vector<int64_t> want = ReadAll(four);
  EXPECT_THAT(want, ElementsAre(0, 10, 20, 30, 1, 21, 31, 2, 22, 23));
  for (int64_t cycle_length : {int64_t{1} << 40, INT64_MAX}) {
    auto p = make(cycle_length);
    ASSERT_TRUE(p.status().ok()) << p.status();
    EXPECT_EQ(ReadAll(p), want) << cycle_length;
    EXPECT_EQ(p.Stats().back().Extra("opened"), 4);
  }
}

TEST(InterleaveTest, CancelWakesAConsumerBlockedInAnOpenInput) {
  // The open input's producer waits on a source that never delivers.
  auto gated = std::make_shared<std::atomic<testing::GatedSource<int64_t>*>>(nullptr);
  auto p = FromRange(0, 2).Interleave([gated](int64_t) {
    auto source = std::make_unique<testing::GatedSource<int64_t>>();
    gated->store(source.get());
    return From<int64_t>(std::move(source)).Prefetch({.depth = 2});
  });
  absl::Status status;
  std::thread consumer([&] { status = p.Next().status(); });
  while (gated->load() == nullptr) std::this_thread::yield();
  gated->load()->AwaitWaiting(1);
  p.Cancel();
  consumer.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dataecho
