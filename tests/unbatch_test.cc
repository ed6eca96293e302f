// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Unbatch: rows back as Examples (bytes, label, indices, epoch, dtype after a
// cast), batch echo's copies as repeats, malformed batches, epochs, TryNext
// over a Prefetch, stats, and its state at every position of a batch.
#include "dataecho/unbatch.h"

#include <cstring>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/resume_check.h"

namespace dataecho {
namespace {

using testing::DrainWithStatus;
using ::testing::HasSubstr;
using testing::Key;
using testing::MakeExamples;

std::vector<std::string> Keys(const std::vector<Example>& v) {
  std::vector<std::string> out;
  for (const Example& e : v) out.push_back(Key(e));
  return out;
}

template <typename V>
Tensor Column(DType dtype, Shape shape, const std::vector<V>& values) {
  MutableBuffer mb(values.size() * sizeof(V));
  if (!values.empty()) std::memcpy(mb.data(), values.data(), values.size() * sizeof(V));
  return *Tensor::Make(dtype, std::move(shape), std::move(mb).Freeze());
}

// A well-formed batch of `rows` rows of one uint8 [3] component; row r has
// label 10 + r, source index 100 + r, bytes r.
Batch HandMade(int64_t rows) {
  Batch b;
  b.num_rows = rows;
  b.components.push_back(
      Column(DType::kUInt8, {rows, 3}, std::vector<uint8_t>(static_cast<size_t>(rows * 3), 7)));
  std::vector<int64_t> labels, sources;
  for (int64_t r = 0; r < rows; ++r) {
    labels.push_back(10 + r);
    sources.push_back(100 + r);
  }
  b.labels = Column(DType::kInt64, {rows}, labels);
  b.source_indices = Column(DType::kInt64, {rows}, sources);
  b.repeat_indices =
      Column(DType::kInt32, {rows}, std::vector<int32_t>(static_cast<size_t>(rows), 0));
  b.fresh_rows = rows;
  return b;
}

TEST(UnbatchTest, GivesBackTheRowsAsTheyWereBatched) {
  const std::vector<Example> examples = MakeExamples(10, 6);
  auto p = FromVector(examples).Batch({.batch_size = 4}).Unbatch();
  std::vector<Example> rows;
  for (Example& e : p) rows.push_back(e);
  ASSERT_TRUE(p.status().ok()) << p.status();
  EXPECT_EQ(Keys(rows), Keys(examples));
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[9].components[0].shape(), Shape({6}));
  EXPECT_EQ(rows[9].label, examples[9].label);
}

TEST(UnbatchTest, RowsShareTheBatchBytesAndKeepItsCast) {
  auto p =
      FromVector(MakeExamples(3, 4)).Batch({.batch_size = 3, .cast = DType::kFloat32}).Unbatch();
  auto [rows, status] = [&] {
    absl::StatusOr<StagePtr<Example>> s = std::move(p).Release();
    EXPECT_TRUE(s.ok());
    return DrainWithStatus(**s);
  }();
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(rows.size(), 3u);
  for (const Example& e : rows) {
    EXPECT_EQ(e.components[0].dtype(), DType::kFloat32);
    EXPECT_EQ(e.components[0].shape(), Shape({4}));
  }
  // One fused buffer: row 1 starts 16 bytes after row 0.
  EXPECT_EQ(rows[1].components[0].buffer().data(), rows[0].components[0].buffer().data() + 16);
  EXPECT_EQ(rows[2].components[0].data<float>()[1], float((2 * 31 + 1) % 251));
}

TEST(UnbatchTest, RowsKeepTheirEpochAndCopiesOfAnEchoedBatchAreRepeats) {
  auto epochs = FromVector(MakeExamples(3)).Repeat(2).Batch({.batch_size = 2}).Unbatch();
  std::vector<uint32_t> seen;
  for (Example& e : epochs) seen.push_back(e.epoch);
  ASSERT_TRUE(epochs.status().ok()) << epochs.status();
  // The second batch holds the last row of epoch 0 and the first of epoch 1:
  // a Batch keeps one epoch, the newest.
  EXPECT_EQ(seen, std::vector<uint32_t>({0, 0, 1, 1, 1, 1}));

  auto echoed = FromVector(MakeExamples(2)).Batch({.batch_size = 2}).Echo({.factor = 2}).Unbatch();
  std::vector<std::pair<uint64_t, uint32_t>> got;
  for (Example& e : echoed) got.emplace_back(e.source_index, e.repeat_index);
  ASSERT_TRUE(echoed.status().ok()) << echoed.status();
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, uint32_t>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
}

TEST(UnbatchTest, MalformedBatchesAreInvalidArgumentNamingTheColumn) {
  struct Case {
    std::string what;
    Batch batch;
  };
  std::vector<Case> cases;
  cases.push_back({"labels is int64 [2], not int64 [3]", HandMade(3)});
  cases.back().batch.labels = Column(DType::kInt64, {2}, std::vector<int64_t>{1, 2});
  cases.push_back({"source_indices is int32 [3], not int64 [3]", HandMade(3)});
  cases.back().batch.source_indices = Column(DType::kInt32, {3}, std::vector<int32_t>{1, 2, 3});
  cases.push_back({"repeat_indices[1] is -1", HandMade(3)});
  cases.back().batch.repeat_indices = Column(DType::kInt32, {3}, std::vector<int32_t>{0, -1, 0});
  cases.push_back({"component 1 is uint8 [2, 3], not [3, ...]", HandMade(3)});
  cases.back().batch.components.push_back(HandMade(2).components[0]);
  cases.push_back({"component 0 is uint8 [], not [3, ...]", HandMade(3)});
  cases.back().batch.components[0] = Column(DType::kUInt8, {}, std::vector<uint8_t>{1});
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<Batch> batches = {HandMade(2), c.batch, HandMade(1)};
    auto p = FromVector(std::move(batches)).Unbatch({.name = "rows"});
    std::vector<Example> rows;
    for (Example& e : p) rows.push_back(e);
    EXPECT_EQ(rows.size(), 2u);  // the first batch's rows, then the error
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
    EXPECT_THAT(p.status().message(), HasSubstr("rows: batch 1 (epoch 0): " + c.what));
    EXPECT_EQ(p.Next().status(), p.status());  // sticky
    EXPECT_EQ(p.SaveState().status(), p.status());
  }
}

TEST(UnbatchTest, SkipsEmptyBatchesAndRejectsANullInput) {
  std::vector<Batch> batches = {HandMade(0), HandMade(2), HandMade(0)};
  auto p = FromVector(std::move(batches)).Unbatch();
  std::vector<uint64_t> sources;
  for (Example& e : p) sources.push_back(e.source_index);
  ASSERT_TRUE(p.status().ok()) << p.status();
  EXPECT_EQ(sources, std::vector<uint64_t>({100, 101}));

  EXPECT_EQ(UnbatchStage::Make(nullptr).status(),
            absl::InvalidArgumentError("unbatch: null input stage"));
  EXPECT_EQ(UnbatchStage::Make(*VectorSource(std::vector<Batch>{}), {.name = ""}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(UnbatchTest, CountsRowsAndBatches) {
  auto p = FromVector(MakeExamples(10, 6)).Batch({.batch_size = 4}).Unbatch();
  for (Example& e : p) (void)e;
  ASSERT_TRUE(p.status().ok());
  const std::vector<StageStats> stats = p.Stats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[2].name, "unbatch");
  EXPECT_EQ(stats[2].elements, 10);
  EXPECT_EQ(stats[2].bytes, 60);
  EXPECT_EQ(stats[2].Extra("batches"), 3);
}

TEST(UnbatchTest, TryNextOverAPrefetchNeverBlocks) {
  absl::StatusOr<StagePtr<Example>> s = FromVector(MakeExamples(9))
                                            .Batch({.batch_size = 4})
                                            .Prefetch({.depth = 2})
                                            .Unbatch()
                                            .Release();
  ASSERT_TRUE(s.ok());
  std::vector<uint64_t> sources;
  while (true) {
    absl::StatusOr<std::optional<Example>> r;
    if (!(*s)->TryNext(&r)) continue;  // nothing ready yet: try again
    ASSERT_TRUE(r.ok()) << r.status();
    if (!r->has_value()) break;
    sources.push_back((*r)->source_index);
  }
  EXPECT_EQ(sources, std::vector<uint64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(UnbatchTest, StartsOverWithItsInputMidBatch) {
  auto p = FromVector(MakeExamples(10)).Batch({.batch_size = 4}).Unbatch().Take(5).Repeat(2);
  std::vector<std::pair<uint64_t, uint32_t>> got;
  for (Example& e : p) got.emplace_back(e.source_index, e.epoch);
  ASSERT_TRUE(p.status().ok()) << p.status();
  ASSERT_EQ(got.size(), 10u);
  EXPECT_EQ(got[4], (std::pair<uint64_t, uint32_t>(4, 0)));
  EXPECT_EQ(got[5], (std::pair<uint64_t, uint32_t>(0, 1)));
  EXPECT_EQ(got[9], (std::pair<uint64_t, uint32_t>(4, 1)));
}

TEST(UnbatchTest, ResumesAtTheExactRowOfItsBatch) {
  // Every position: before, inside and at the end of each batch.
  const auto plain = [] {
    return FromVector(MakeExamples(11, 5)).Batch({.batch_size = 4}).Unbatch();
  };
  std::vector<std::string> expected;
  {
    auto whole = plain();
    expected = testing::Rest(whole);
  }
  ASSERT_EQ(expected.size(), 11u);
  std::vector<size_t> every(12);
  for (size_t i = 0; i < every.size(); ++i) every[i] = i;
  EXPECT_TRUE(testing::CheckResumesAt<Example>(plain, expected, every));

  // Shuffled, echoed, cast batches over two epochs, behind a Prefetch.
  EXPECT_GT(testing::CheckResumes<Example>([] {
              return FromVector(MakeExamples(30, 4))
                  .Shuffle({.buffer_size = 8, .seed = 3})
                  .Repeat(2)
                  .Echo({.factor = 1.5, .seed = 4})
                  .Batch({.batch_size = 7, .cast = DType::kFloat16})
                  .Prefetch({.depth = 2})
                  .Unbatch();
            }),
            0u);
}

TEST(UnbatchTest, ItsRowsCanBeReferencedByAnEchoAfterIt) {
  // Echo keeps its current row: saved as a reference to the row of its batch.
  EXPECT_GT(testing::CheckResumes<Example>([] {
              return FromVector(MakeExamples(13, 3))
                  .Batch({.batch_size = 2})
                  .Unbatch()
                  .Echo({.factor = 2.5, .seed = 5})
                  .Prefetch({.depth = 3});
            }),
            0u);
}

TEST(UnbatchTest, AShuffleOfItsRowsCannotSave) {
  auto p = FromVector(MakeExamples(40))
               .Batch({.batch_size = 2})
               .Unbatch()
               .Shuffle({.buffer_size = 20, .seed = 1});
  ASSERT_TRUE(p.Next().ok());
  const absl::StatusOr<std::string> state = p.SaveState();
  EXPECT_EQ(state.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(state.status().message(),
              HasSubstr("unbatch can reference only the rows of the last 4 batches it read"));
}

}  // namespace
}  // namespace dataecho
