// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "dataecho/float16.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

constexpr DType kAll[] = {DType::kUInt8,   DType::kInt32,   DType::kInt64,
                          DType::kFloat32, DType::kFloat16, DType::kBFloat16};

// n elements of `dtype` holding values an image or a feature could: small
// integers and, for the float types, fractions, negatives and (float16) a
// subnormal, so that every rounding case of the conversions is met.
std::vector<uint8_t> Values(DType dtype, size_t n) {
  std::vector<uint8_t> out(n * DTypeSize(dtype));
  for (size_t i = 0; i < n; ++i) {
    const float v = dtype == DType::kUInt8
                        ? static_cast<float>(i * 37 % 256)
                        : static_cast<float>(static_cast<int>(i * 37 % 601) - 300) / 7.0f;
    uint8_t* p = out.data() + i * DTypeSize(dtype);
    switch (dtype) {
      case DType::kUInt8: *p = static_cast<uint8_t>(v); break;
      case DType::kInt32: {
        const auto x = static_cast<int32_t>(i * 37 % 601) - 300;
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::kInt64: {
        const auto x = static_cast<int64_t>(i * 37 % 601) - 300;
        std::memcpy(p, &x, 8);
        break;
      }
      case DType::kFloat32: std::memcpy(p, &v, 4); break;
      case DType::kFloat16: {
        const uint16_t h = FloatToHalf(i % 97 == 5 ? 3e-6f : v);  // one subnormal
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kBFloat16: {
        const uint16_t h = FloatToBFloat16(v);
        std::memcpy(p, &h, 2);
        break;
      }
    }
  }
  return out;
}

// The scalar definition AffineRow must match bit for bit.
std::vector<uint8_t> Reference(const std::vector<uint8_t>& src, DType in, size_t n,
                               const std::vector<float>& a, const std::vector<float>& b,
                               DType out) {
  std::vector<float> y(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = i % a.size();
    const float x = LoadAsFloat(src.data(), in, i) * a[c];
    y[i] = x + b[c];
  }
  std::vector<uint8_t> dst(n * DTypeSize(out));
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = dst.data() + i * DTypeSize(out);
    if (out == DType::kFloat32) {
      std::memcpy(p, &y[i], 4);
    } else {
      const uint16_t h = out == DType::kFloat16 ? FloatToHalf(y[i]) : FloatToBFloat16(y[i]);
      std::memcpy(p, &h, 2);
    }
  }
  return dst;
}

TEST(DTypeTest, LoadAsFloatReadsEveryType) {
  const float f = -189.0f / 7.0f;  // element 3 of Values() for the float types
  const std::pair<DType, float> expected[] = {
      {DType::kUInt8, 111.0f},
      {DType::kInt32, -189.0f},
      {DType::kInt64, -189.0f},
      {DType::kFloat32, f},
      {DType::kFloat16, HalfToFloat(FloatToHalf(f))},
      {DType::kBFloat16, BFloat16ToFloat(FloatToBFloat16(f))}};
  for (const auto& [t, value] : expected) {
    const std::vector<uint8_t> v = Values(t, 64);
    EXPECT_EQ(LoadAsFloat(v.data(), t, 3), value) << DTypeName(t);
  }
}

TEST(DTypeTest, StoreFloatsRoundsAndClampsIntegers) {
  const std::vector<float> in = {-3.5f, -0.5f, 0.49f, 0.5f, 254.5f, 300.0f, 3e9f, -3e9f};
  std::vector<uint8_t> u8(in.size());
  StoreFloats(in.data(), in.size(), DType::kUInt8, u8.data());
  EXPECT_EQ(u8, (std::vector<uint8_t>{0, 0, 0, 1, 255, 255, 255, 0}));
  std::vector<int32_t> i32(in.size());
  StoreFloats(in.data(), in.size(), DType::kInt32, reinterpret_cast<uint8_t*>(i32.data()));
  EXPECT_EQ(i32, (std::vector<int32_t>{-3, 0, 0, 1, 255, 300, std::numeric_limits<int32_t>::max(),
                                       std::numeric_limits<int32_t>::min()}));
  std::vector<int64_t> i64(in.size());
  StoreFloats(in.data(), in.size(), DType::kInt64, reinterpret_cast<uint8_t*>(i64.data()));
  EXPECT_EQ(i64[6], 3000000000);
  std::vector<uint16_t> f16(in.size());
  StoreFloats(in.data(), in.size(), DType::kFloat16, reinterpret_cast<uint8_t*>(f16.data()));
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(f16[i], FloatToHalf(in[i])) << i;
}

// Every input type to every float type, one channel and three, on rows long
// enough for the vector paths and with a tail they leave to the scalar one:
// the same bits as the scalar definition.
TEST(DTypeTest, AffineRowIsTheScalarDefinitionBitForBit) {
  for (DType in : kAll) {
    for (DType out : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      for (const auto& [a, b] : {std::pair{std::vector<float>{1.0f / 255 / 0.353f},
                                           std::vector<float>{-0.286f / 0.353f}},
                                 std::pair{std::vector<float>{0.017f, 0.0175f, 0.0174f},
                                           std::vector<float>{-2.1f, -2.03f, -1.8f}},
                                 std::pair{std::vector<float>{1e-7f}, std::vector<float>{0.0f}}}) {
        const size_t n = 3 * 4099;  // a multiple of 3, not of 8
        const std::vector<uint8_t> src = Values(in, n);
        std::vector<uint8_t> dst(n * DTypeSize(out));
        AffineRow(src.data(), in, n, a, b, out, dst.data());
        EXPECT_EQ(dst, Reference(src, in, n, a, b, out))
            << DTypeName(in) << " -> " << DTypeName(out) << ", " << a.size() << " channel(s)";
      }
    }
  }
}

}  // namespace
}  // namespace dataecho
