// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// PaddedBatch: variable-length components padded to the longest row or a
// fixed shape, with masks and lengths; values, layout, errors and stats;
// sizes beyond the memory cap (an option, or rows padded to the longest).
#include "dataecho/padded_batch.h"

#include <cstring>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::DrainWithStatus;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <typename V>
Tensor MakeTensor(DType dtype, Shape shape, const std::vector<V>& values) {
  MutableBuffer mb(values.size() * sizeof(V));
  if (!values.empty()) std::memcpy(mb.data(), values.data(), values.size() * sizeof(V));
  return *Tensor::Make(dtype, std::move(shape), std::move(mb).Freeze());
}

// A token sequence: int32 [n] holding 1..n, label n.
Example Sequence(int32_t n, uint64_t index) {
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) tokens[static_cast<size_t>(i)] = i + 1;
  Example e;
  e.components.push_back(MakeTensor(DType::kInt32, {n}, tokens));
  e.label = n;
  e.source_index = index;
  return e;
}

std::vector<Example> Sequences(const std::vector<int32_t>& lengths) {
  std::vector<Example> out;
  for (size_t i = 0; i < lengths.size(); ++i) out.push_back(Sequence(lengths[i], i));
  return out;
}

template <typename V>
std::vector<V> Values(const Tensor& t) {
  auto span = t.data<V>();
  return std::vector<V>(span.begin(), span.end());
}

TEST(PaddedBatchTest, PadsSequencesToTheLongestWithMaskAndLengths) {
  auto p = FromVector(Sequences({3, 1, 4, 2, 5})).PaddedBatch({.batch_size = 3});
  std::vector<Batch> batches;
  for (Batch& b : p) batches.push_back(b);
  ASSERT_TRUE(p.status().ok()) << p.status();
  ASSERT_EQ(batches.size(), 2u);

  const Batch& b = batches[0];
  EXPECT_EQ(b.num_rows, 3);
  ASSERT_EQ(b.components.size(), 3u);  // data, mask, lengths
  EXPECT_EQ(b.components[0].dtype(), DType::kInt32);
  EXPECT_EQ(b.components[0].shape(), Shape({3, 4}));
  EXPECT_THAT(Values<int32_t>(b.components[0]),
              ElementsAreArray<int32_t>({1, 2, 3, 0, 1, 0, 0, 0, 1, 2, 3, 4}));
  EXPECT_EQ(b.components[1].dtype(), DType::kUInt8);
  EXPECT_EQ(b.components[1].shape(), Shape({3, 4}));
  EXPECT_THAT(Values<uint8_t>(b.components[1]),
              ElementsAreArray<uint8_t>({1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(b.components[2].dtype(), DType::kInt64);
  EXPECT_EQ(b.components[2].shape(), Shape({3, 1}));
  EXPECT_THAT(Values<int64_t>(b.components[2]), ElementsAre(3, 1, 4));
  EXPECT_THAT(Values<int64_t>(b.labels), ElementsAre(3, 1, 4));
  EXPECT_THAT(Values<int64_t>(b.source_indices), ElementsAre(0, 1, 2));
  EXPECT_EQ(b.fresh_rows, 3);

  // Each batch pads to its own longest row.
  EXPECT_EQ(batches[1].components[0].shape(), Shape({2, 5}));
  EXPECT_THAT(Values<int32_t>(batches[1].components[0]),
              ElementsAreArray<int32_t>({1, 2, 0, 0, 0, 1, 2, 3, 4, 5}));

  const StageStats stats = p.Stats().back();
  EXPECT_EQ(stats.name, "padded_batch");
  EXPECT_EQ(stats.elements, 2);
  EXPECT_EQ(stats.Extra("rows"), 5);
  // 12 + 10 cells, 8 + 7 of them data.
  EXPECT_DOUBLE_EQ(stats.Extra("padding_fraction"), 7.0 / 22.0);
}

TEST(PaddedBatchTest, PadsEveryDimensionOfImagesWithTheGivenValue) {
  // 2x3 and 3x2 single-channel images -> [2, 3, 3, 1], padding 255.
  std::vector<Example> images(2);
  images[0].components.push_back(MakeTensor<uint8_t>(DType::kUInt8, {2, 3, 1}, {1, 2, 3, 4, 5, 6}));
  images[1].components.push_back(
      MakeTensor<uint8_t>(DType::kUInt8, {3, 2, 1}, {7, 8, 9, 10, 11, 12}));
  auto p = FromVector(std::move(images))
               .PaddedBatch({.batch_size = 2, .padding_values = {255}, .lengths = false});
  auto b = p.Next();
  ASSERT_TRUE(b.ok() && b->has_value()) << p.status();
  ASSERT_EQ((*b)->components.size(), 2u);  // data, mask
  EXPECT_EQ((*b)->components[0].shape(), Shape({2, 3, 3, 1}));
  EXPECT_THAT(Values<uint8_t>((*b)->components[0]),
              ElementsAreArray<uint8_t>({1, 2, 3, 4, 5, 6, 255, 255, 255,  //
                                         7, 8, 255, 9, 10, 255, 11, 12, 255}));
  EXPECT_THAT(Values<uint8_t>((*b)->components[1]),
              ElementsAreArray<uint8_t>({1, 1, 1, 1, 1, 1, 0, 0, 0,  //
                                         1, 1, 0, 1, 1, 0, 1, 1, 0}));
}

TEST(PaddedBatchTest, FixedPaddedShapeAndFloatPadding) {
  std::vector<Example> rows(2);
  for (int i = 0; i < 2; ++i) {
    rows[static_cast<size_t>(i)].components.push_back(
        MakeTensor<float>(DType::kFloat32, {i + 1, 2}, std::vector<float>(2 * (i + 1), 1.5f)));
    rows[static_cast<size_t>(i)].components.push_back(
        MakeTensor<int64_t>(DType::kInt64, {}, {int64_t{40} + i}));  // a scalar
  }
  PaddedBatchOptions options{
      .batch_size = 2, .padded_shapes = {{4, -1}}, .padding_values = {-0.5}, .masks = false};
  auto p = FromVector(std::move(rows)).PaddedBatch(options);
  auto b = p.Next();
  ASSERT_TRUE(b.ok() && b->has_value()) << p.status();
  ASSERT_EQ((*b)->components.size(), 4u);  // two data, two lengths
  const Tensor& data = (*b)->components[0];
  EXPECT_EQ(data.shape(), Shape({2, 4, 2}));
  EXPECT_THAT(Values<float>(data),
              ElementsAreArray<float>({1.5f, 1.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f,  //
                                       1.5f, 1.5f, 1.5f, 1.5f, -0.5f, -0.5f, -0.5f, -0.5f}));
  EXPECT_EQ((*b)->components[1].shape(), Shape({2}));
  EXPECT_THAT(Values<int64_t>((*b)->components[1]), ElementsAre(40, 41));
  EXPECT_EQ(options.LengthsIndex(0, 2), 2);
  EXPECT_EQ(options.MaskIndex(0, 2), -1);
  EXPECT_THAT(Values<int64_t>((*b)->components[2]), ElementsAre(1, 2, 2, 2));
  EXPECT_EQ((*b)->components[3].shape(), Shape({2, 0}));  // a scalar has no lengths
}

TEST(PaddedBatchTest, RowsThatCannotBePaddedTogetherAreInvalidArgument) {
  auto longer = FromVector(Sequences({2, 7})).PaddedBatch({.padded_shapes = {{5}}});
  auto r = longer.Next();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("example 1 component 0 is [7]"));

  std::vector<Example> mixed = Sequences({2});
  mixed.push_back(Example());
  mixed.back().components.push_back(MakeTensor<float>(DType::kFloat32, {2}, {1, 2}));
  mixed.back().source_index = 9;
  auto dtype = FromVector(std::move(mixed)).PaddedBatch({.batch_size = 4});
  EXPECT_EQ(dtype.Next().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dtype.status().message()), HasSubstr("example 9"));

  auto rank = FromVector(Sequences({2, 3})).PaddedBatch({.padded_shapes = {{5, 5}}});
  EXPECT_EQ(rank.Next().status().code(), absl::StatusCode::kInvalidArgument);

  auto value = FromVector(Sequences({2})).PaddedBatch({.padding_values = {0.5}});
  EXPECT_EQ(value.Next().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(value.status().message()), HasSubstr("does not fit int32"));
}

TEST(PaddedBatchTest, RejectsBadOptions) {
  EXPECT_EQ(FromVector(Sequences({1})).PaddedBatch({.batch_size = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(Sequences({1})).PaddedBatch({.padded_shapes = {{-2}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PaddedBatchStage::Make(nullptr, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PaddedBatchTest, InputErrorAfterAPartialBatchAndDropRemainder) {
  int32_t i = 0;
  auto failing = FromGenerator<Example>([&i]() -> absl::StatusOr<std::optional<Example>> {
                   if (i == 5) return absl::DataLossError("bad record 5");
                   ++i;
                   return Sequence(i, static_cast<uint64_t>(i));
                 })
                     .PaddedBatch({.batch_size = 2})
                     .Release();
  ASSERT_TRUE(failing.ok());
  auto [batches, status] = DrainWithStatus(**failing);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].num_rows, 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);

  auto dropped =
      FromVector(Sequences({1, 2, 3})).PaddedBatch({.batch_size = 2, .drop_remainder = true});
  int n = 0;
  for ([[maybe_unused]] Batch& b : dropped) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(dropped.status().ok());
}

TEST(PaddedBatchTest, SteadyStateReusesBuffers) {
  std::vector<int32_t> lengths;
  for (int i = 0; i < 4000; ++i) lengths.push_back(1 + (i * 37) % 200);
  auto p = FromVector(Sequences(lengths)).PaddedBatch({.batch_size = 32});
  int64_t batches = 0;
  for ([[maybe_unused]] Batch& b : p) ++batches;
  ASSERT_TRUE(p.status().ok());
  EXPECT_EQ(batches, 125);
  // Six buffers a batch; size classes let batches of different widths share
  // them, so the pool allocates far fewer than one per batch.
  EXPECT_LT(p.Stats().back().Extra("buffer_allocations"), 6 * 20);
}

// A padded_shapes entry whose byte count overflows 64 bits: refused by the
// factory (it segfaulted writing past a buffer sized by the wrapped count), as
// is a fixed dimension that overflows only with the longest row's others.
TEST(PaddedBatchTest, HugePaddedShapeIsResourceExhaustedBeforeAllocating) {
  auto fixed = FromVector(Sequences({3})).PaddedBatch({.padded_shapes = {{int64_t{1} << 62}}});
  EXPECT_EQ(fixed.status().code(), absl::StatusCode::kResourceExhausted) << fixed.status();
  EXPECT_THAT(std::string(fixed.status().message()),
              HasSubstr("padded_batch: batch_size x padded_shapes[0] = [32, 4611686018427387904] "
                        "needs at least 2^63 bytes"));
  EXPECT_THAT(std::string(fixed.status().message()), HasSubstr("PaddedBatchOptions::max_bytes"));

  std::vector<Example> rows;
  for (uint64_t i = 0; i < 3; ++i) {
    rows.emplace_back();
    rows.back().components.push_back(MakeTensor<int32_t>(DType::kInt32, {1, 1}, {1}));
    rows.back().source_index = i;
  }
  auto longest = FromVector(std::move(rows))
                     .PaddedBatch({.batch_size = 3, .padded_shapes = {{-1, int64_t{1} << 40}}});
  ASSERT_TRUE(longest.status().ok()) << longest.status();
  absl::StatusOr<std::optional<Batch>> b = longest.Next();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted) << b.status();
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("batch_size = 3 rows like example 0 padded to [1, 1099511627776]"));
  EXPECT_EQ(longest.Next().status().code(), absl::StatusCode::kResourceExhausted);  // sticky
  EXPECT_EQ(longest.Stats().back().Extra("buffer_allocations"), 0);
}

// Three small rows, each long in another dimension ([65536, 1, 1], [1, 65536,
// 1], [1, 1, 65536] bytes): padded together, each becomes 2^48 bytes. The
// batch is checked against the cap before any buffer is taken.
TEST(PaddedBatchTest, RowsPaddedToTheLongestAreCheckedAgainstTheCap) {
  std::vector<Example> rows;
  for (int d = 0; d < 3; ++d) {
    Shape shape = {1, 1, 1};
    shape[static_cast<size_t>(d)] = 65536;
    rows.emplace_back();
    rows.back().components.push_back(
        MakeTensor<uint8_t>(DType::kUInt8, shape, std::vector<uint8_t>(65536, 7)));
    rows.back().source_index = static_cast<uint64_t>(d);
  }
  auto p = FromVector(std::move(rows)).PaddedBatch({.batch_size = 3});
  ASSERT_TRUE(p.status().ok()) << p.status();
  absl::StatusOr<std::optional<Batch>> b = p.Next();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted) << b.status();
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("padded_batch: a batch of 3 rows padded to [65536, 65536, 65536]"));
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("PaddedBatchOptions::max_bytes = 0: half of"));
  EXPECT_EQ(p.Stats().back().Extra("buffer_allocations"), 0);
}

// One long row pads every row of its batch: with max_bytes the whole batch
// (data, mask, lengths, index columns) is checked; with room, it batches.
TEST(PaddedBatchTest, OneLongRowIsCheckedAgainstMaxBytes) {
  // 3 rows padded to [1000] int32: 3 x (1000 x (4 + 1) + 8 + 20) = 15084 bytes.
  auto tight = FromVector(Sequences({1, 1000, 1}))
                   .PaddedBatch({.batch_size = 3, .max_bytes = 15083, .name = "tokens"});
  ASSERT_TRUE(tight.status().ok()) << tight.status();
  absl::StatusOr<std::optional<Batch>> b = tight.Next();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted) << b.status();
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("tokens: a batch of 3 rows padded to [1000] (5028 bytes a row) needs "
                        "14.7 KiB, above the memory cap of 14.7 KiB (PaddedBatchOptions::max_bytes "
                        "= 15083)"));
  auto fits =
      FromVector(Sequences({1, 1000, 1})).PaddedBatch({.batch_size = 3, .max_bytes = 15084});
  absl::StatusOr<std::optional<Batch>> ok = fits.Next();
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->components[0].shape(), (Shape{3, 1000}));
}

// batch_size as in Batch: at most BatchOptions::kMaxBatchSize rows, its index
// columns within the cap, and the first row's size times batch_size checked
// before the rows are gathered.
TEST(PaddedBatchTest, BatchSizeIsLimitedAsBatchLimitsIt) {
  auto huge = FromVector(Sequences({1})).PaddedBatch({.batch_size = 100000000000});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument) << huge.status();
  EXPECT_THAT(std::string(huge.status().message()), HasSubstr("BatchOptions::kMaxBatchSize"));
  auto index = FromVector(Sequences({1})).PaddedBatch({.batch_size = 1000, .max_bytes = 10000});
  EXPECT_EQ(index.status().code(), absl::StatusCode::kResourceExhausted) << index.status();
  EXPECT_THAT(std::string(index.status().message()),
              HasSubstr("padded_batch: batch_size = 1000 needs at least 19.5 KiB (20 bytes each)"));
  EXPECT_EQ(FromVector(Sequences({1})).PaddedBatch({.max_bytes = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // 100 rows like the first ([1000] int32, 5028 bytes padded): refused at the
  // first row, before 99 more are read.
  int pulled = 0;
  auto rows = FromGenerator<Example>([&pulled]() -> absl::StatusOr<std::optional<Example>> {
                pulled++;
                return Sequence(1000, static_cast<uint64_t>(pulled));
              }).PaddedBatch({.batch_size = 100, .max_bytes = 100000});
  ASSERT_TRUE(rows.status().ok()) << rows.status();
  EXPECT_EQ(rows.Next().status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(rows.status().message()),
              HasSubstr("batch_size = 100 rows like example 1 padded to [1000]"));
  EXPECT_EQ(pulled, 1);
}

}  // namespace
}  // namespace dataecho
