// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Sizes that cannot exist fail in the factory, before anything is allocated:
// a shuffle buffer or a batch beyond the memory cap (memory.h), a batch size
// beyond what a batch can have; the checked products and sums of sizes; a
// record source's cycle_length far above its file count.
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "dataecho/batch.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/memory.h"
#include "dataecho/pipeline.h"
#include "dataecho/shuffle.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(MemoryCapTest, DefaultIsHalfOfWhatTheProcessMayUse) {
  EXPECT_GT(AvailableMemoryBytes(), int64_t{64} << 20);
  EXPECT_EQ(DefaultMemoryCap(), AvailableMemoryBytes() / 2);
  EXPECT_EQ(EffectiveMemoryCap(0), DefaultMemoryCap());
  EXPECT_EQ(EffectiveMemoryCap(12345), 12345);
  EXPECT_EQ(FormatBytes(1000), "1000 bytes");
  EXPECT_EQ(FormatBytes(int64_t{3} << 29), "1.5 GiB");
}

TEST(MemoryCapTest, EstimateSaturatesAndNamesTheOption) {
  EXPECT_TRUE(CheckMemoryEstimate("s", "n", 10, 10, 100, "Opt::max_bytes").ok());
  absl::Status s = CheckMemoryEstimate("s", "n", 11, 10, 100, "Opt::max_bytes");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Message(s),
            "s: n = 11 needs at least 110 bytes (10 bytes each), above the memory cap of 100 bytes "
            "(Opt::max_bytes = 100)");
  s = CheckMemoryEstimate("s", "n", INT64_MAX, INT64_MAX, 0, "Opt::max_bytes");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(Message(s).find("2^63 bytes"), std::string::npos) << s;
  EXPECT_NE(Message(s).find("(Opt::max_bytes = 0: half of the"), std::string::npos) << s;
  s = CheckMemoryEstimate("s", "n", 11, 10, 100, "");
  EXPECT_NE(Message(s).find("(max_bytes = 100)"), std::string::npos) << s;
  s = CheckMemoryEstimate("s", "n", INT64_MAX, 2, 0, "");
  EXPECT_NE(Message(s).find(" (half of the "), std::string::npos) << s;
}

// Products and sums of sizes saturate instead of wrapping around to a small
// number; a shape is checked as a whole and named in the error.
TEST(MemoryCapTest, ShapeProductsSaturateAndNameTheShape) {
  EXPECT_EQ(SaturatingProduct({3, 4, 5}), 60);
  EXPECT_EQ(SaturatingProduct({}), 1);
  EXPECT_EQ(SaturatingProduct({int64_t{1} << 40, 0}), 0);
  EXPECT_EQ(SaturatingProduct({int64_t{1} << 40, int64_t{1} << 40, 2}), INT64_MAX);
  // A product that wraps to 0 in 64 bits (2^32 x 2^32) is not 0.
  EXPECT_EQ(SaturatingProduct({int64_t{1} << 32, int64_t{1} << 32}), INT64_MAX);
  EXPECT_EQ(SaturatingSum({1, 2, 3}), 6);
  EXPECT_EQ(SaturatingSum({INT64_MAX, 1}), INT64_MAX);

  absl::StatusOr<int64_t> fits = CheckShapeBytes("s", "shape", {10, 10}, 4, 400, "Opt::max_bytes");
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(*fits, 400);
  absl::StatusOr<int64_t> over = CheckShapeBytes("s", "shape", {10, 11}, 4, 400, "Opt::max_bytes");
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Message(over.status()),
            "s: shape = [10, 11] needs at least 440 bytes (4 bytes each), above the memory cap of "
            "400 bytes (Opt::max_bytes = 400)");
  // 2^62 cells of 4 bytes: the byte count overflows, the check does not.
  over = CheckShapeBytes("s", "shape", {int64_t{1} << 62}, 4, 0, "Opt::max_bytes");
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(Message(over.status()).find("= [4611686018427387904] needs at least 2^63 bytes"),
            std::string::npos)
      << over.status();
  EXPECT_EQ(CheckShapeBytes("s", "shape", {2, -1}, 4, 0, "").status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_TRUE(CheckBytes("s", "it", 100, 100, "").ok());
  absl::StatusOr<int64_t> sum = CheckBytes("s", "WORLD_SIZE = 7", 101, 100, "");
  EXPECT_EQ(sum.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Message(sum.status()),
            "s: WORLD_SIZE = 7 needs 101 bytes, above the memory cap of 100 bytes (max_bytes = "
            "100)");
}

// A record source makes one slot (and reading thread) per file, not per
// cycle_length: INT_MAX over three files reads them as cycle_length 3 does.
TEST(AbsurdSizesTest, RecordSourceCycleLengthAboveTheFileCountCostsNothing) {
  testing::TempDir dir;
  std::vector<std::string> files;
  for (int f = 0; f < 3; ++f) {
    files.push_back(dir.File("part-" + std::to_string(f)));
    auto w = TFRecordWriter::Create(files.back());
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = 0; i <= f; ++i) ASSERT_TRUE((*w)->Write(std::to_string(10 * f + i)).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto read = [&](int cycle_length) {
    std::vector<std::string> out;
    StagePtr<Record> source =
        MakeTFRecordSource(OpenObjectStore(), files, {}, {.cycle_length = cycle_length});
    auto records = testing::Drain(*source);
    EXPECT_TRUE(records.ok()) << records.status();
    if (records.ok()) {
      for (const Record& r : *records) out.emplace_back(r.data.view());
    }
    return out;
  };
  const std::vector<std::string> want = read(3);
  EXPECT_EQ(want, (std::vector<std::string>{"0", "10", "20", "11", "21", "22"}));
  EXPECT_EQ(read(INT_MAX), want);
}

// The issue's --shuffle_buffer=99999999999999: refused by the factory, with
// the default cap, for any element type (its slots alone are petabytes).
TEST(AbsurdSizesTest, ShuffleBufferBeyondTheMemoryCapIsRefusedByTheFactory) {
  constexpr int64_t kHuge = 99999999999999;
  Pipeline<int64_t> numbers = FromRange(0, 3).Shuffle({.buffer_size = kHuge});
  EXPECT_EQ(numbers.status().code(), absl::StatusCode::kResourceExhausted) << numbers.status();
  EXPECT_NE(Message(numbers.status()).find("shuffle: buffer_size = 99999999999999 needs at least"),
            std::string::npos)
      << numbers.status();
  EXPECT_NE(Message(numbers.status()).find("ShuffleOptions::max_bytes"), std::string::npos);
  auto examples = ShuffleStage<Example>::Make(*VectorSource(testing::MakeExamples(3)),
                                              {.buffer_size = kHuge, .name = "mixer"});
  EXPECT_EQ(examples.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(Message(examples.status()).find("mixer: buffer_size"), std::string::npos);
  // An explicit cap is checked the same way; a buffer within it runs.
  EXPECT_EQ(FromRange(0, 3).Shuffle({.buffer_size = 1000, .max_bytes = 1000}).status().code(),
            absl::StatusCode::kResourceExhausted);
  auto fits = FromRange(0, 3).Shuffle({.buffer_size = 100, .max_bytes = 100000});
  ASSERT_TRUE(fits.status().ok()) << fits.status();
  EXPECT_EQ(testing::Drain(*std::move(fits).Release().value())->size(), 3u);
}

// The elements held count their slots too: a buffer of elements with tiny
// payloads still stops at the cap.
TEST(AbsurdSizesTest, ShuffleCapCountsTheSlotsOfHeldElements) {
  const int64_t per = static_cast<int64_t>(sizeof(Example)) + 1;
  auto p =
      FromVector(testing::MakeExamples(100, 1))
          .Shuffle({.buffer_size = 50, .max_bytes = 50 * static_cast<int64_t>(sizeof(Example))});
  ASSERT_TRUE(p.status().ok()) << p.status();  // the slots alone fit
  absl::StatusOr<std::optional<Example>> r = p.Next();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << per;
}

// The issue's --batch_size=100000000000: more rows than a batch can have.
TEST(AbsurdSizesTest, BatchSizeBeyondTheMaximumIsInvalidArgument) {
  auto p = FromVector(testing::MakeExamples(3)).Batch({.batch_size = 100000000000});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
  EXPECT_NE(Message(p.status()).find("BatchOptions::kMaxBatchSize"), std::string::npos)
      << p.status();
  EXPECT_EQ(FromVector(testing::MakeExamples(3)).Batch({.max_bytes = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AbsurdSizesTest, BatchBeyondTheMemoryCapFailsBeforeItsBuffersAreTaken) {
  // The index columns alone (20 bytes a row): refused by the factory.
  auto p = FromVector(testing::MakeExamples(3)).Batch({.batch_size = 1000, .max_bytes = 10000});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
  EXPECT_NE(Message(p.status()).find("BatchOptions::max_bytes"), std::string::npos);
  // Rows of 1000 + 20 bytes: the first batch is checked when its first row
  // comes, before its buffers are taken; the failure stays.
  auto rows = FromVector(testing::MakeExamples(300, 1000))
                  .Batch({.batch_size = 100, .max_bytes = 100000, .name = "rows"});
  ASSERT_TRUE(rows.status().ok()) << rows.status();
  absl::StatusOr<std::optional<Batch>> b = rows.Next();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(Message(b.status())
                .find("rows: batch_size = 100 needs at least 99.6 KiB (1020 bytes "
                      "each)"),
            std::string::npos)
      << b.status();
  EXPECT_EQ(rows.Next().status().code(), absl::StatusCode::kResourceExhausted);
  std::vector<StageStats> stats = rows.Stats();
  EXPECT_EQ(stats.back().Extra("buffer_allocations"), 0);
  // With room for them, the same rows batch.
  auto fits =
      FromVector(testing::MakeExamples(300, 1000)).Batch({.batch_size = 100, .max_bytes = 102000});
  absl::StatusOr<std::optional<Batch>> ok = fits.Next();
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->num_rows, 100);
}

// The pool of adaptive (and auto) echo may fill up to pool_size items.
TEST(AbsurdSizesTest, EchoPoolBeyondTheMemoryCapIsRefusedByTheFactory) {
  constexpr int64_t kHuge = int64_t{1} << 50;
  auto adaptive = FromVector(testing::MakeExamples(3)).AdaptiveEcho({.pool_size = kHuge});
  EXPECT_EQ(adaptive.status().code(), absl::StatusCode::kResourceExhausted) << adaptive.status();
  EXPECT_NE(Message(adaptive.status()).find("adaptive_echo: pool_size = "), std::string::npos);
  auto automatic =
      FromVector(testing::MakeExamples(3)).AutoEcho({.adaptive = {.pool_size = kHuge}});
  EXPECT_EQ(automatic.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(FromVector(testing::MakeExamples(3)).AdaptiveEcho({.pool_size = 4096}).status().ok());
}

// A factor whose copies do not fit the 32-bit count (the conversion was
// undefined behaviour) is refused like any other invalid factor.
TEST(AbsurdSizesTest, EchoFactorAboveAMillionIsInvalidArgument) {
  for (double bad : {1e6 + 1, 1e300}) {
    auto p = FromVector(testing::MakeExamples(3)).Echo({.factor = bad});
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(FromVector(testing::MakeExamples(3)).Echo({.factor = 1e6}).status().ok());
}

}  // namespace
}  // namespace dataecho
