// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// float16.h: IEEE half precision (FP16) and bfloat16 (BF16) conversions.
//
// Both narrowings round to nearest, ties to even; NaN stays NaN (quiet) and
// ±Inf stays ±Inf. FP16 overflow gives ±Inf and tiny values become subnormals
// or ±0, as IEEE 754 says. Values are carried as raw 16-bit patterns.
//
//   uint16_t h = dataecho::FloatToHalf(0.1f);      // 0x2E66
//   float back = dataecho::HalfToFloat(h);         // 0.0999755859375f
//   uint16_t b = dataecho::FloatToBFloat16(1.0f);  // 0x3F80
//
// All functions are pure and thread-safe.
#ifndef DATAECHO_FLOAT16_H_
#define DATAECHO_FLOAT16_H_

#include <bit>
#include <cstdint>

namespace dataecho {

inline uint16_t FloatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep sign, force a quiet payload bit
    return static_cast<uint16_t>((x >> 16) | 0x0040u);
  }
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even (overflow rounds to Inf)
  return static_cast<uint16_t>(x >> 16);
}

inline float BFloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

inline uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x0200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal (2^-25)
    const uint32_t exp = abs >> 23;      // 102..112
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;  // implicit leading one
    const uint32_t shift = 126 - exp;                     // 14..24
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped mantissa bits.
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  int e = 113;  // subnormal: normalize
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(e) << 23) | ((mant & 0x3ffu) << 13));
}

}  // namespace dataecho

#endif  // DATAECHO_FLOAT16_H_
