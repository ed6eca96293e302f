// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Range-for over a pipeline: every element, then the end or the error, which
// the pipeline keeps in status() (an error mid-stream must not look like a
// clean end).
#include "dataecho/pipeline_iterator.h"

#include <memory>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using ::testing::ElementsAre;

// 0, 1, ... and, at position `k`, a DATA_LOSS error.
Pipeline<int64_t> FailingAt(int64_t k) {
  return FromGenerator<int64_t>(
      [k, i = int64_t{0}]() mutable -> absl::StatusOr<std::optional<int64_t>> {
        if (i == k)
          return absl::DataLossError("corrupted record at mem://numbers:" + std::to_string(k));
        return i++;
      });
}

TEST(PipelineIteratorTest, VisitsEveryElementThenEndsCleanly) {
  auto p = FromRange(0, 5).Map([](int64_t x) { return x * 10; });
  std::vector<int64_t> seen;
  for (int64_t& x : p) seen.push_back(x);
  EXPECT_THAT(seen, ElementsAre(0, 10, 20, 30, 40));
  EXPECT_TRUE(p.status().ok()) << p.status();
}

TEST(PipelineIteratorTest, ErrorMidStreamEndsTheLoopAndStaysInStatus) {
  auto p = FailingAt(4).Prefetch({.depth = 2}).Map([](int64_t x) { return x + 1; });
  std::vector<int64_t> seen;
  for (int64_t& x : p) seen.push_back(x);
  EXPECT_THAT(seen, ElementsAre(1, 2, 3, 4));  // everything before the error, in order
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss) << p.status();
  EXPECT_EQ(p.status().message(), "corrupted record at mem://numbers:4");
  EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kDataLoss);
  // A second loop does not run: the pipeline stays failed.
  int more = 0;
  for ([[maybe_unused]] int64_t& x : p) ++more;
  EXPECT_EQ(more, 0);
}

TEST(PipelineIteratorTest, NextErrorIsKeptInStatus) {
  auto p = FailingAt(1);
  ASSERT_TRUE(p.Next().ok());
  EXPECT_TRUE(p.status().ok());
  EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss);
}

TEST(PipelineIteratorTest, BuildErrorSkipsTheLoop) {
  auto p = FromRange(0, 5).Shuffle({.buffer_size = 0});
  int body = 0;
  for ([[maybe_unused]] int64_t& x : p) ++body;
  EXPECT_EQ(body, 0);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PipelineIteratorTest, BreakThenLoopAgainContinuesTheStream) {
  auto p = FromRange(0, 6);
  std::vector<int64_t> first, second;
  for (int64_t x : p) {
    first.push_back(x);
    if (x == 2) break;
  }
  for (int64_t x : p) second.push_back(x);
  EXPECT_THAT(first, ElementsAre(0, 1, 2));
  EXPECT_THAT(second, ElementsAre(3, 4, 5));
  EXPECT_TRUE(p.status().ok());
}

TEST(PipelineIteratorTest, BatchesAndMoveOnlyElements) {
  auto batches = FromVector(testing::MakeExamples(10)).Batch({.batch_size = 4});
  std::vector<int64_t> rows;
  for (Batch& b : batches) rows.push_back(b.num_rows);
  EXPECT_THAT(rows, ElementsAre(4, 4, 2));
  EXPECT_TRUE(batches.status().ok());

  auto owned = FromGenerator<std::unique_ptr<int64_t>>(
      [i = int64_t{0}]() mutable -> absl::StatusOr<std::optional<std::unique_ptr<int64_t>>> {
        if (i == 3) return std::nullopt;
        return std::make_unique<int64_t>(i++);
      });
  int64_t sum = 0;
  for (std::unique_ptr<int64_t>& x : owned) sum += *x;
  EXPECT_EQ(sum, 3);
}

TEST(PipelineIteratorTest, CancelledPipelineEndsTheLoopWithCancelled) {
  auto p = FromRange(0, 1000);
  int64_t n = 0;
  for ([[maybe_unused]] int64_t x : p) {
    if (++n == 10) p.Cancel();
  }
  EXPECT_EQ(n, 10);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dataecho
