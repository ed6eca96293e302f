// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include <cmath>
#include <cstring>
#include <limits>

#include "dataecho/buffer.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/float16.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/tensor.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

TEST(BufferTest, SlicesShareStorageAndBytes) {
  const char text[] = "0123456789";
  Buffer b = Buffer::CopyOf(text, 10);
  Buffer s = b.Slice(3, 4);
  EXPECT_EQ(s.view(), "3456");
  EXPECT_TRUE(s.SharesStorageWith(b));
  EXPECT_EQ(b.use_count(), 2);
  Buffer copy = s;
  EXPECT_EQ(copy.data(), s.data());
  EXPECT_EQ(b.use_count(), 3);
  EXPECT_FALSE(Buffer::CopyOf(text, 10).SharesStorageWith(b));
}

TEST(BufferTest, MutableBufferIsAlignedAndFreezes) {
  MutableBuffer mb(100, 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mb.data()) % 64, 0u);
  std::memset(mb.data(), 7, 100);
  mb.Truncate(50);
  Buffer b = std::move(mb).Freeze();
  EXPECT_EQ(b.size(), 50u);
  EXPECT_EQ(b.data()[49], 7);
  EXPECT_EQ(mb.size(), 0u);
}

TEST(BufferTest, EverySizeAndAlignmentIsAlignedAndWritable) {
  for (size_t alignment : {1, 8, 64, 128, 4096}) {
    for (size_t size : {0, 1, 63, 64, 65, 784, 100000}) {
      MutableBuffer mb(size, alignment);
      ASSERT_EQ(mb.size(), size);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(mb.data()) % alignment, 0u) << size << " " << alignment;
      std::memset(mb.data(), 0x5a, size);
      Buffer b = std::move(mb).Freeze();
      Buffer tail = b.Slice(size / 2, size - size / 2);
      b = Buffer();
      EXPECT_EQ(tail.use_count(), 1);  // the slice alone keeps the storage alive
      for (uint8_t v : tail.span()) ASSERT_EQ(v, 0x5a);
    }
  }
}

TEST(TensorTest, MakeChecksSize) {
  EXPECT_TRUE(Tensor::Make(DType::kFloat32, {2, 3}, Buffer::CopyOf(std::string(24, 'x'))).ok());
  auto bad = Tensor::Make(DType::kFloat32, {2, 3}, Buffer::CopyOf(std::string(23, 'x')));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("needs 24 bytes"), std::string::npos);
  EXPECT_EQ(Tensor::Make(DType::kUInt8, {-1}, Buffer()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Tensor::Make(DType::kUInt8, {int64_t{1} << 40, int64_t{1} << 40}, Buffer()).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// Names live with their enums: each name parses back to its value, and an
// unknown name is INVALID_ARGUMENT listing the known ones.
TEST(EnumNamesTest, EveryNameParsesBackAndOthersAreInvalid) {
  for (DType t : {DType::kUInt8, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat16,
                  DType::kBFloat16}) {
    EXPECT_EQ(ParseDType(DTypeName(t)).value(), t);
  }
  for (Compression c :
       {Compression::kNone, Compression::kGzip, Compression::kZlib, Compression::kAuto}) {
    EXPECT_EQ(ParseCompression(CompressionName(c)).value(), c);
  }
  for (ImageEncoding e : {ImageEncoding::kRaw, ImageEncoding::kJpeg}) {
    EXPECT_EQ(ParseImageEncoding(ImageEncodingName(e)).value(), e);
  }
  EXPECT_EQ(
      ParseDType("float64").status(),
      absl::InvalidArgumentError(
          "unknown dtype 'float64' (one of uint8, int32, int64, float32, float16, bfloat16)"));
  EXPECT_EQ(
      ParseCompression("bz2").status(),
      absl::InvalidArgumentError("unknown compression 'bz2' (one of none, gzip, zlib, auto)"));
  EXPECT_EQ(ParseImageEncoding("png").status(),
            absl::InvalidArgumentError("unknown image encoding 'png' (one of raw, jpeg)"));
  EXPECT_FALSE(ParseCompression("").ok());
}

TEST(ExampleTest, TraitsMarkRepeats) {
  Example e;
  EXPECT_EQ(ElementTraits<Example>::FreshCount(e), 1);
  ElementTraits<Example>::MarkRepeat(e, 2);
  EXPECT_EQ(e.repeat_index, 2u);
  EXPECT_EQ(ElementTraits<Example>::FreshCount(e), 0);
  Batch b;
  b.num_rows = 8;
  b.fresh_rows = 5;
  EXPECT_EQ(ElementTraits<Batch>::FreshCount(b), 5);
  ElementTraits<Batch>::MarkRepeat(b, 1);
  EXPECT_EQ(b.fresh_rows, 0);
  EXPECT_EQ(b.num_rows, 8);
}

// Known bit patterns (IEEE 754 binary16 and bfloat16).
TEST(Float16Test, HalfKnownPatterns) {
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // halfway to 65536 rounds to even: Inf
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);             // smallest normal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);             // tie -> even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);             // above the tie
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);             // 1.5 ulp tie -> even (2)
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie -> even (up)
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(HalfToFloat(nan)));
}

TEST(Float16Test, HalfRoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f))));
      continue;
    }
    ASSERT_EQ(FloatToHalf(f), h) << "pattern " << h;
  }
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
}

TEST(Float16Test, BFloat16KnownPatterns) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBFloat16(-2.0f), 0xC000);
  EXPECT_EQ(FloatToBFloat16(3.14159265f), 0x4049);
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie -> even
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7F80);           // rounds to Inf
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x7F800001u)) & 0x7FC0, 0x7FC0);  // sNaN stays NaN
  EXPECT_TRUE(
      std::isnan(BFloat16ToFloat(FloatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(BFloat16ToFloat(0x3F80), 1.0f);
}

// A shape from options or data whose element count overflows: INT64_MAX (which
// every size check refuses), never a wrapped value; a zero dimension gives 0
// whatever the others (the sizes_fuzz input that found it: a PaddedBatch row
// padded to [2^47, 2^39, 0] passed the byte check and then memset INT64_MAX).
TEST(NumElementsTest, SaturatesInsteadOfOverflowingAndZeroWins) {
  constexpr int64_t kBig = int64_t{1} << 40;
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({28, 28, 1}), 784);
  EXPECT_EQ(NumElements({kBig, kBig}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(NumElements({kBig, kBig, 0}), 0);
  EXPECT_EQ(NumElements({0, kBig, kBig}), 0);
}

}  // namespace
}  // namespace dataecho
