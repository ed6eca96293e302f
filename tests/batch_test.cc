// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/batch.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "dataecho/float16.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/gated_sources.h"

namespace dataecho {
namespace {

using testing::Drain;
using testing::GatedSource;
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
      EXPECT_EQ(std::memcmp(batch.components[0].buffer().data() + r * 33,
                            want.components[0].buffer().data(), 33),
                0);
      EXPECT_EQ(batch.labels.data<int64_t>()[static_cast<size_t>(r)], want.label);
      EXPECT_EQ(batch.source_indices.data<int64_t>()[static_cast<size_t>(r)],
                static_cast<int64_t>(i));
    }
  }
}

TEST(BatchTest, DropRemainder) {
  std::vector<Batch> out = BatchAll(MakeExamples(10), {.batch_size = 4, .drop_remainder = true});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(BatchAll(MakeExamples(3), {.batch_size = 4, .drop_remainder = true}).size(), 0u);
  EXPECT_EQ(BatchAll(MakeExamples(8), {.batch_size = 4}).size(), 2u);
}

// Each row holds its own example's bytes, in every epoch: a remainder dropped
// at the end of one epoch leaves nothing behind for the next one's batches,
// on the single-threaded path (rows copied a few rows after they arrive) and
// with row threads (rows converted in chunks as they arrive).
TEST(BatchTest, RowsAreTheirOwnAcrossEpochsAfterADroppedRemainder) {
  for (int threads : {1, 3}) {
    Pipeline<Batch> p = FromVector(MakeExamples(23, 33))
                            .Batch({.batch_size = 10,
                                    .drop_remainder = true,
                                    .threads = threads,
                                    .parallel_min_rows = 4})
                            .Repeat(3);
    int batches = 0;
    for (const Batch& batch : p) {
      ++batches;
      ASSERT_EQ(batch.num_rows, 10);
      for (int64_t r = 0; r < batch.num_rows; ++r) {
        const auto i = static_cast<uint64_t>(batch.source_indices.data<int64_t>()[r]);
        EXPECT_EQ(std::memcmp(batch.components[0].buffer().data() + r * 33,
                              MakeExample(i, 33).components[0].buffer().data(), 33),
                  0)
            << "threads " << threads << ", batch " << batches << ", row " << r;
      }
    }
    EXPECT_TRUE(p.status().ok()) << p.status();
    EXPECT_EQ(batches, 6) << "threads " << threads;
  }
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
  BatchOptions base{
      .batch_size = 2, .scale = 1.0f / 255, .mean = {0.5f, 0.2f}, .stddev = {0.25f, 0.5f}};
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    BatchOptions o = base;
    o.cast = dtype;
    std::vector<Batch> out = BatchAll({PixelExample(px, 2), PixelExample(px, 2)}, o);
    ASSERT_EQ(out.size(), 1u);
    const Tensor& t = out[0].components[0];
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.shape(), Shape({2, 2, 2}));
    for (size_t i = 0; i < 8; ++i) {
      const float ref = (1.0f / 255 * px[i % 4]) / (i % 2 ? 0.5f : 0.25f) -
                        (i % 2 ? 0.2f : 0.5f) / (i % 2 ? 0.5f : 0.25f);
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
  std::vector<Batch> h = BatchAll({PixelExample(px, 2)}, [&] {
    BatchOptions o = base;
    o.cast = DType::kFloat16;
    return o;
  }());
  EXPECT_EQ(h[0].components[0].data<uint16_t>()[0], 0xC000);
  EXPECT_EQ(h[0].components[0].data<uint16_t>()[1], 0x3E66);
  std::vector<Batch> b = BatchAll({PixelExample(px, 2)}, [&] {
    BatchOptions o = base;
    o.cast = DType::kBFloat16;
    return o;
  }());
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
    for (int64_t r = 0; r < b.num_rows; ++r)
      EXPECT_EQ(b.repeat_indices.data<int32_t>()[static_cast<size_t>(r)], r % 2);
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

// With row threads a mismatched row in the middle of a batch, after some of
// its chunks were converted, fails the batch the same way, and the error
// stays.
TEST(BatchTest, MismatchedRowMidBatchWithRowThreads) {
  std::vector<Example> in = MakeExamples(3000, 512);
  in[2500] = MakeExample(2500, 9);
  auto stage = FromVector(std::move(in))
                   .Batch({.batch_size = 3000, .threads = 2, .parallel_min_rows = 1})
                   .Release();
  ASSERT_TRUE(stage.ok());
  for (int call = 0; call < 2; ++call) {
    auto r = (*stage)->Next();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("example 2500"), absl::string_view::npos) << r.status();
  }
}

// Row threads take turns pulling chunks of rows: the input is still pulled
// in order, no further than the batch needs, and an input error in the
// middle of a batch comes after a batch of the rows read before it, as with
// one thread. (Rows of 101 bytes cast to float16 make chunks of 1,312 rows.)
TEST(BatchTest, RowThreadsPullInOrderAndStopAtTheBatchAndTheError) {
  for (int threads : {1, 2, 3}) {
    int64_t pulls = 0;
    auto p = FromGenerator<Example>([&]() -> absl::StatusOr<std::optional<Example>> {
               if (pulls == 4500) return absl::DataLossError("bad record");
               return MakeExample(static_cast<uint64_t>(pulls++), 101);
             })
                 .Batch({.batch_size = 3000,
                         .cast = DType::kFloat16,
                         .threads = threads,
                         .parallel_min_rows = 64});
    auto b = p.Next();
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
    EXPECT_EQ(pulls, 3000) << "threads " << threads;
    ASSERT_EQ((*b)->num_rows, 3000);
    for (int64_t r = 0; r < 3000; ++r) {
      int64_t source = -1;
      std::memcpy(&source, (*b)->source_indices.buffer().data() + r * sizeof(int64_t),
                  sizeof(source));
      ASSERT_EQ(source, r) << "threads " << threads;
      uint16_t h = 0;  // the row's first value, cast
      std::memcpy(&h, (*b)->components[0].buffer().data() + r * 101 * sizeof(uint16_t), 2);
      ASSERT_EQ(h,
                FloatToHalf(static_cast<float>(
                    MakeExample(static_cast<uint64_t>(r), 101).components[0].buffer().data()[0])))
          << "threads " << threads << ", row " << r;
    }
    b = p.Next();
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
    EXPECT_EQ((*b)->num_rows, 1500) << "threads " << threads;
    b = p.Next();
    EXPECT_EQ(b.status().code(), absl::StatusCode::kDataLoss) << "threads " << threads;
    EXPECT_EQ(pulls, 4500);
  }
}

constexpr int64_t kCutShortRows = 1000;

// With row threads a row sits in the stage's raw row slots from when it is
// gathered until a pool thread converts and destroys it. A batch cut short
// (an input error after some of its rows, a Cancel() or the pipeline
// destroyed while it waits for the rest) still releases every row gathered:
// nothing hangs, and the payload the rows share is back to one owner (under
// ASan: nothing leaks). 1,000 rows of 512 bytes: one chunk of 512 rows handed
// to the pool, 488 rows not yet.
TEST(BatchTest, RowThreadsReleaseEveryRowOfABatchCutShort) {
  MutableBuffer bytes(512);
  std::memset(bytes.data(), 7, 512);
  const Buffer payload = std::move(bytes).Freeze();
  auto source_of = [&](GatedSource<Example>** raw, int64_t rows = kCutShortRows) {
    auto source = std::make_unique<GatedSource<Example>>();
    for (int64_t i = 0; i < rows; ++i) {
      Example e;
      e.components.push_back(*Tensor::Make(DType::kUInt8, {512}, payload));
      e.source_index = static_cast<uint64_t>(i);
      source->Push(std::move(e));
    }
    *raw = source.get();
    return From(StagePtr<Example>(std::move(source)));
  };
  for (int threads : {2, 3}) {
    const BatchOptions options{.batch_size = 3000, .threads = threads, .parallel_min_rows = 1};
    GatedSource<Example>* source = nullptr;
    {  // An input error: the rows before it make a batch, then the error, not taken.
      auto p = source_of(&source).Batch(options);
      source->Push(absl::DataLossError("bad record"));
      auto b = p.Next();
      ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
      EXPECT_EQ((*b)->num_rows, kCutShortRows);
      EXPECT_EQ(payload.use_count(), 1) << "threads " << threads;
    }
    {  // Cancelled from another thread while the batch waits for its next row.
      auto p = source_of(&source).Batch(options);
      std::thread canceller([&] {
        source->AwaitWaiting(1);
        p.Cancel();
      });
      auto b = p.Next();
      canceller.join();
      EXPECT_TRUE(!b.ok() || b->has_value()) << "threads " << threads;
      EXPECT_EQ(payload.use_count(), 1) << "threads " << threads;
    }
    {  // Destroyed while a Prefetch's producer, running ahead, waits inside the
       // half-filled second batch.
      auto p = source_of(&source, 3000 + kCutShortRows).Batch(options).Prefetch({.depth = 1});
      auto b = p.Next();
      ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
      source->AwaitWaiting(1);
    }
    EXPECT_EQ(payload.use_count(), 1) << "threads " << threads;
  }
}

TEST(BatchTest, InvalidOptions) {
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.batch_size = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.cast = DType::kInt32}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.mean = {0.5f}}).status().code(),
            absl::StatusCode::kInvalidArgument);
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

namespace dataecho {
namespace {

// The FP16 cast converts whole rows at once (with F16C where the CPU has it);
// every value must match the scalar FloatToHalf bit for bit: every half value,
// the rounding boundaries between them, overflow, subnormals, NaNs, and random
// bit patterns.
TEST(BatchTest, Float16CastMatchesFloatToHalfBitForBit) {
  std::vector<float> values;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    values.push_back(f);
    values.push_back(std::nextafter(f, 0.0f));
    values.push_back(std::nextafter(f, f < 0 ? -INFINITY : INFINITY));
  }
  for (float f : {65504.0f, 65519.0f, 65519.996f, 65520.0f, 1e30f, 5.9604645e-8f, 2.9802322e-8f,
                  2.9802326e-8f, 6.1035156e-5f, -0.0f, INFINITY, -INFINITY}) {
    values.push_back(f);
  }
  for (uint32_t bits : {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu})
    values.push_back(std::bit_cast<float>(bits));
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(x)));
  }
  constexpr size_t kRow = 1000;  // not a multiple of 8: the tail takes the scalar path
  values.resize((values.size() + kRow - 1) / kRow * kRow, 1.0f);
  std::vector<Example> rows;
  for (size_t r = 0; r < values.size() / kRow; ++r) {
    Example e;
    e.components.push_back(
        *Tensor::Make(DType::kFloat32, {static_cast<int64_t>(kRow)},
                      Buffer::CopyOf(values.data() + r * kRow, kRow * sizeof(float))));
    rows.push_back(std::move(e));
  }
  const size_t num_rows = rows.size();
  std::vector<Batch> out = BatchAll(std::move(rows), {.batch_size = 64, .cast = DType::kFloat16});
  size_t checked = 0, mismatches = 0;
  for (const Batch& b : out) {
    absl::Span<const uint16_t> got = b.components[0].data<uint16_t>();
    for (size_t i = 0; i < got.size(); ++i, ++checked) {
      const float v = values[checked];  // no normalization: the cast's affine step is exact
      if (got[i] != FloatToHalf(v) && ++mismatches <= 10) {
        ADD_FAILURE() << "value " << std::bit_cast<uint32_t>(values[checked]) << ": got " << got[i]
                      << ", want " << FloatToHalf(v);
      }
    }
  }
  EXPECT_EQ(checked, num_rows * kRow);
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace dataecho

namespace dataecho {
namespace {

// One-channel uint8 rows (images) take a vectorized path; it must compute
// x * (scale / stddev) + (-mean / stddev) exactly as the scalar one, for
// float32 and float16, including a row length that is not a multiple of 8.
TEST(BatchTest, Uint8ImageCastIsBitExactOnEveryPath) {
  constexpr int64_t kRow = 259;
  std::vector<Example> rows;
  for (int r = 0; r < 4; ++r) {
    std::vector<uint8_t> px(kRow);
    for (int64_t i = 0; i < kRow; ++i) px[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 7 + r);
    rows.push_back(PixelExample(px, 1));
  }
  const float scale = 1.0f / 255, mean = 0.286f, sd = 0.353f;
  const float a = scale / sd, b = -mean / sd;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    std::vector<Batch> out = BatchAll(
        rows, {.batch_size = 4, .cast = dtype, .scale = scale, .mean = {mean}, .stddev = {sd}});
    ASSERT_EQ(out.size(), 1u);
    for (int r = 0; r < 4; ++r) {
      for (int64_t i = 0; i < kRow; ++i) {
        const float x = static_cast<float>(static_cast<uint8_t>(i * 7 + r));
        const float m = x * a;
        const float want = m + b;
        const size_t k = static_cast<size_t>(r * kRow + i);
        if (dtype == DType::kFloat32) {
          ASSERT_EQ(std::bit_cast<uint32_t>(out[0].components[0].data<float>()[k]),
                    std::bit_cast<uint32_t>(want))
              << k;
        } else {
          ASSERT_EQ(out[0].components[0].data<uint16_t>()[k], FloatToHalf(want)) << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dataecho

namespace dataecho {
namespace {

// A batch whose rows are split among threads is byte-identical to the
// single-threaded batch, for every cast, the final partial batch included.
// Small rows in batches of 100 make one chunk a batch (its rows converted
// once they are all in); rows of 101 bytes in batches of 4,000 make several
// (converted while the rest arrive), and a partial last one.
TEST(BatchTest, RowThreadsGiveTheSameBatches) {
  struct Shape {
    int examples, bytes, batch_size;
    size_t batches;
  };
  for (const Shape& shape : {Shape{1050, 37, 100, 11}, Shape{9100, 101, 4000, 3}}) {
    for (std::optional<DType> cast : std::vector<std::optional<DType>>{
             std::nullopt, DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      BatchOptions one{.batch_size = shape.batch_size, .cast = cast};
      if (cast) {
        one.scale = 1.0f / 255;
        one.mean = {0.5f};
        one.stddev = {0.25f};
      }
      BatchOptions pooled = one;
      pooled.threads = 3;
      pooled.parallel_min_rows = 64;
      std::vector<Batch> a = BatchAll(MakeExamples(shape.examples, shape.bytes), one);
      std::vector<Batch> b = BatchAll(MakeExamples(shape.examples, shape.bytes), pooled);
      ASSERT_EQ(a.size(), shape.batches);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].num_rows, b[i].num_rows);
        EXPECT_EQ(a[i].fresh_rows, b[i].fresh_rows);
        for (const auto& [x, y] : {std::pair{&a[i].components[0], &b[i].components[0]},
                                   std::pair{&a[i].labels, &b[i].labels},
                                   std::pair{&a[i].source_indices, &b[i].source_indices},
                                   std::pair{&a[i].repeat_indices, &b[i].repeat_indices}}) {
          ASSERT_EQ(x->byte_size(), y->byte_size());
          EXPECT_EQ(std::memcmp(x->buffer().data(), y->buffer().data(), x->byte_size()), 0)
              << "batch " << i;
        }
      }
    }
  }
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.threads = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromVector(MakeExamples(1)).Batch({.parallel_min_rows = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dataecho
