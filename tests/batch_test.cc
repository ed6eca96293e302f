// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/batch.h"

#include <cstring>

#include "dataecho/float16.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::Drain;
using testing::MakeExample;
using testing::MakeExamples;

std::vector<Batch> BatchAll(std::vector<Example> in, BatchOptions options) {
  auto stage = FromVector(std::move(in)).Batch(std::move(options)).Release();
  EXPECT_TRUE(stage.ok()) << stage.status();
  return *Drain(**stage);
}

TEST(BatchTest, FusedContentsAreByteExact) {
  std::vector<Batch> out = BatchAll(MakeExamples(10, 33), {.batch_size = 4});
  ASSERT_EQ(out.size(), 3u);
  for (size_t b = 0; b < out.size(); ++b) {
    const Batch& batch = out[b];
    EXPECT_EQ(batch.num_rows, b < 2 ? 4 : 2);
    EXPECT_EQ(batch.components[0].shape(), Shape({batch.num_rows, 33}));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(batch.components[0].buffer().data()) % 64, 0u);
    for (int64_t r = 0; r < batch.num_rows; ++r) {
      const uint64_t i = b * 4 + static_cast<uint64_t>(r);
      const Example want = MakeExample(i, 33);
      EXPECT_EQ(std::memcmp(batch.components[0].buffer().data() + r * 33, want.components[0].buffer().data(), 33), 0);
      EXPECT_EQ(batch.labels.data<int64_t>()[static_cast<size_t>(r)], want.label);
      EXPECT_EQ(batch.source_indices.data<int64_t>()[static_cast<size_t>(r)], static_cast<int64_t>(i));
    }
  }
}

TEST(BatchTest, DropRemainder) {
  std::vector<Batch> out = BatchAll(MakeExamples(10), {.batch_size = 4, .drop_remainder = true});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(BatchAll(MakeExamples(3), {.batch_size = 4, .drop_remainder = true}).size(), 0u);
  EXPECT_EQ(BatchAll(MakeExamples(8), {.batch_size = 4}).size(), 2u);
}

Example PixelExample(std::vector<uint8_t> pixels, int64_t channels) {
  Example e;
  const int64_t n = static_cast<int64_t>(pixels.size());
  e.components.push_back(*Tensor::Make(DType::kUInt8, {n / channels, channels},
                                       Buffer::CopyOf(pixels.data(), pixels.size())));
  return e;
}

TEST(BatchTest, CastAndNormalizeAgainstReferenceValues) {
  // y = (x / 255 - mean[c]) / stddev[c] with two channels.
  std::vector<uint8_t> px = {0, 255, 128, 51};
  const std::vector<float> want = {(0.0f - 0.5f) / 0.25f, (1.0f - 0.2f) / 0.5f,
                                   (128.0f / 255 - 0.5f) / 0.25f, (0.2f - 0.2f) / 0.5f};
  BatchOptions base{.batch_size = 2, .scale = 1.0f / 255, .mean = {0.5f, 0.2f}, .stddev = {0.25f, 0.5f}};
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    BatchOptions o = base;
    o.cast = dtype;
    std::vector<Batch> out = BatchAll({PixelExample(px, 2), PixelExample(px, 2)}, o);
    ASSERT_EQ(out.size(), 1u);
    const Tensor& t = out[0].components[0];
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.shape(), Shape({2, 2, 2}));
    for (size_t i = 0; i < 8; ++i) {
      const float ref = (1.0f / 255 * px[i % 4]) / (i % 2 ? 0.5f : 0.25f) - (i % 2 ? 0.2f : 0.5f) / (i % 2 ? 0.5f : 0.25f);
      EXPECT_NEAR(ref, want[i % 4], 1e-5);
      if (dtype == DType::kFloat32) {
        EXPECT_NEAR(t.data<float>()[i], want[i % 4], 1e-5) << i;
      } else if (dtype == DType::kFloat16) {
        EXPECT_EQ(t.data<uint16_t>()[i], FloatToHalf(ref)) << i;
      } else {
        EXPECT_EQ(t.data<uint16_t>()[i], FloatToBFloat16(ref)) << i;
      }
    }
  }
  // Known bit patterns: 0 -> -2.0 (0xC000 / 0xC000), 255 -> 1.6 (FP16 0x3E66, BF16 0x3FCD).
  std::vector<Batch> h = BatchAll({PixelExample(px, 2)}, [&] { BatchOptions o = base; o.cast = DType::kFloat16; return o; }());
  EXPECT_EQ(h[0].components[0].data<uint16_t>()[0], 0xC000);
  EXPECT_EQ(h[0].components[0].data<uint16_t>()[1], 0x3E66);
  std::vector<Batch> b = BatchAll({PixelExample(px, 2)}, [&] { BatchOptions o = base; o.cast = DType::kBFloat16; return o; }());
  EXPECT_EQ(b[0].components[0].data<uint16_t>()[1], 0x3FCD);
}

TEST(BatchTest, FreshRowsUnderExampleEcho) {
  auto stage = FromVector(MakeExamples(6)).Echo({.factor = 2}).Batch({.batch_size = 4}).Release();
  std::vector<Batch> out = *Drain(**stage);
  ASSERT_EQ(out.size(), 3u);
  int64_t fresh = 0;
  for (const Batch& b : out) {
    EXPECT_EQ(b.fresh_rows, 2);  // rows alternate fresh, repeat
    fresh += b.fresh_rows;
    for (int64_t r = 0; r < b.num_rows; ++r) EXPECT_EQ(b.repeat_indices.data<int32_t>()[static_cast<size_t>(r)], r % 2);
  }
  EXPECT_EQ(fresh, 6);
}

TEST(BatchTest, MismatchedRowsAreRejected) {
  std::vector<Example> in = MakeExamples(3, 8);
  in[2] = MakeExample(2, 9);
  auto stage = FromVector(std::move(in)).Batch({.batch_size = 4}).Release();
  auto r = (*stage)->Next();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("example 2"), absl::string_view::npos) << r.status();
}

TEST(BatchTest, InvalidOptions) {
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.batch_size = 0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.cast = DType::kInt32}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.mean = {0.5f}}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BatchTest, BuffersAreRecycledAtLargeBatchSizes) {
  constexpr int64_t kRows = 65536;
  Example row = MakeExample(1, 4);
  auto p = FromGenerator<Example>([&, n = 0]() mutable -> absl::StatusOr<std::optional<Example>> {
             if (n++ == 8 * kRows) return std::nullopt;
             return row;
           }).Batch({.batch_size = kRows, .cast = DType::kFloat16});
  int batches = 0;
  while (true) {
    auto b = p.Next();  // each batch is released before the next one is built
    ASSERT_TRUE(b.ok());
    if (!b->has_value()) break;
    ASSERT_EQ((*b)->num_rows, kRows);
    ++batches;
  }
  EXPECT_EQ(batches, 8);
  // One block per fused buffer (data, labels, sources, repeats), allocated once.
  EXPECT_EQ(p.Stats().back().Extra("buffer_allocations"), 4);
}

}  // namespace
}  // namespace dataecho
