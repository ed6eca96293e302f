// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The Batch stage's row converters (src/row_convert.h): FP16 casts and the
// affine normalization, on the vectorized path (8 values at a time, where the
// CPU has AVX2 and F16C) and the scalar one (the tail of every row), which
// must agree bit for bit with the scalar conversions of dataecho/float16.h.
#include "row_convert.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dataecho/float16.h"
#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

// float(x) * a + b, multiply and add rounded separately (never fused), as
// row_convert.h promises.
float Reference(uint8_t x, float a, float b) {
  volatile float m = static_cast<float>(x) * a;
  return m + b;
}

TEST(RowConvertTest, FloatsToHalvesKnownPatterns) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, uint16_t>> known = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.1f, 0x2E66},
      {65504.0f, 0x7BFF},                          // largest half
      {65520.0f, 0x7C00},                          // the tie to 65536 rounds to even: Inf
      {1e6f, 0x7C00},                              // overflow
      {-inf, 0xFC00},                              //
      {std::ldexp(1.0f, -14), 0x0400},             // smallest normal
      {std::ldexp(1.0f, -24), 0x0001},             // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},             // tie -> even (0)
      {std::ldexp(3.0f, -25), 0x0002},             // tie -> even (2)
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},      // tie -> even (down)
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},  // tie -> even (up)
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3C01},  // above the tie
  };
  // Every value at every position of a 24-value row (three vector blocks) and
  // of a 7-value row (scalar only).
  for (size_t n : {24u, 7u}) {
    for (const auto& [value, bits] : known) {
      for (size_t pos = 0; pos < n; ++pos) {
        std::vector<float> src(n, 1.0f);
        src[pos] = value;
        std::vector<uint16_t> dst(n, 0xFFFF);
        FloatsToHalves(src.data(), dst.data(), n);
        ASSERT_EQ(dst[pos], bits) << value << " at " << pos << " of " << n;
        ASSERT_EQ(dst[(pos + 1) % n], 0x3C00) << value << " at " << pos << " of " << n;
      }
    }
  }
}

TEST(RowConvertTest, FloatsToHalvesNanInsideAVectorBlock) {
  std::vector<float> src = {1, 2, 3, std::numeric_limits<float>::quiet_NaN(), 5, 6, 7, 8, 9};
  std::vector<uint16_t> dst(src.size());
  FloatsToHalves(src.data(), dst.data(), src.size());
  for (size_t i = 0; i < src.size(); ++i) EXPECT_EQ(dst[i], FloatToHalf(src[i])) << i;
  EXPECT_TRUE(std::isnan(HalfToFloat(dst[3])));
  EXPECT_EQ(dst[7], 0x4800);  // 8.0
}

// Every half value (and the midpoints between neighbours, where rounding
// decides) goes through the row path exactly as through FloatToHalf, and a
// half value comes back unchanged.
TEST(RowConvertTest, FloatsToHalvesMatchesFloatToHalfAndRoundTrips) {
  std::vector<float> src;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    src.push_back(f);
    const float next = HalfToFloat(static_cast<uint16_t>(h + 1));
    if ((h & 0x7FFF) < 0x7BFF) src.push_back(f + (next - f) / 2);  // the tie
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 100000; ++i) src.push_back(std::bit_cast<float>(bits(rng)));
  src.push_back(1.0f);  // an odd length: a scalar tail too
  std::vector<uint16_t> dst(src.size());
  FloatsToHalves(src.data(), dst.data(), src.size());
  int mismatches = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    if (std::isnan(src[i])) {
      EXPECT_TRUE(std::isnan(HalfToFloat(dst[i]))) << i;
    } else if (dst[i] != FloatToHalf(src[i]) && ++mismatches <= 10) {
      ADD_FAILURE() << "value " << src[i] << ": got " << dst[i] << ", want " << FloatToHalf(src[i]);
    }
  }
  EXPECT_EQ(mismatches, 0);
  for (uint32_t h = 0; h < 0x7C00; ++h) {  // every finite positive half, by position
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    uint16_t back = 0;
    FloatsToHalves(&f, &back, 1);
    ASSERT_EQ(back, h);
  }
}

// Normalization of images: (x - mean) / std as x * (1 / std) + (-mean / std),
// to float32 and float16, for every byte value at every position.
TEST(RowConvertTest, AffineMatchesTheReferenceForEveryByte) {
  struct Params {
    float a, b;
  } params[] = {
      {1.0f / 255.0f, 0.0f},                            // scale to [0, 1]
      {1.0f / (255.0f * 0.3081f), -0.1307f / 0.3081f},  // MNIST mean and std
      {2.0f / 255.0f, -1.0f},                           // [-1, 1]
      {1.0f, 0.0f},                                     // plain cast
      {300.0f, 0.0f},                                   // overflows float16 from x = 219 on
  };
  std::vector<uint8_t> src(256 + 5);  // a scalar tail of 5
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 37 % 256);
  for (const Params& p : params) {
    std::vector<float> f32(src.size());
    std::vector<uint16_t> f16(src.size());
    AffineU8ToF32(src.data(), f32.data(), src.size(), p.a, p.b);
    AffineU8ToF16(src.data(), f16.data(), src.size(), p.a, p.b);
    for (size_t i = 0; i < src.size(); ++i) {
      const float want = Reference(src[i], p.a, p.b);
      ASSERT_EQ(std::bit_cast<uint32_t>(f32[i]), std::bit_cast<uint32_t>(want))
          << "x=" << int{src[i]} << " a=" << p.a << " b=" << p.b;
      ASSERT_EQ(f16[i], FloatToHalf(want)) << "x=" << int{src[i]} << " a=" << p.a;
    }
  }
}

TEST(RowConvertTest, AffineKnownValues) {
  const uint8_t src[9] = {0, 51, 102, 153, 204, 255, 0, 255, 128};
  float f32[9];
  uint16_t f16[9];
  AffineU8ToF32(src, f32, 9, 2.0f / 255.0f, -1.0f);
  AffineU8ToF16(src, f16, 9, 2.0f / 255.0f, -1.0f);
  EXPECT_EQ(f32[0], -1.0f);
  EXPECT_EQ(f32[5], 1.0f);
  EXPECT_EQ(f32[6], -1.0f);
  EXPECT_EQ(f32[7], 1.0f);
  EXPECT_NEAR(f32[2], -0.2f, 1e-6f);
  EXPECT_EQ(f16[0], 0xBC00);  // -1
  EXPECT_EQ(f16[5], 0x3C00);  // 1
  EXPECT_EQ(f16[7], 0x3C00);  // 1 (scalar tail)
  EXPECT_EQ(f16[8], FloatToHalf(Reference(128, 2.0f / 255.0f, -1.0f)));
  EXPECT_EQ(f16[8], 0x1C04);  // 1/255 = 0.0039216 = 2^-8 * (1 + 4/1024) as FP16
}

// A NaN scale makes every value NaN, on both paths.
TEST(RowConvertTest, AffineWithNanGivesNan) {
  std::vector<uint8_t> src(19, 7);
  std::vector<uint16_t> f16(src.size());
  AffineU8ToF16(src.data(), f16.data(), src.size(), std::numeric_limits<float>::quiet_NaN(), 0);
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_TRUE(std::isnan(HalfToFloat(f16[i]))) << i;
    EXPECT_EQ(f16[i], FloatToHalf(Reference(7, std::numeric_limits<float>::quiet_NaN(), 0))) << i;
  }
}

}  // namespace
}  // namespace dataecho::internal
