// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Row conversions for the Batch stage's cast, vectorized with AVX2 and F16C
// where the CPU has them (checked at run time), with scalar fallbacks. Every
// function gives bit-identical results on either path: the affine step is a
// multiply then an add (never fused), and float16 follows FloatToHalf (round
// to nearest even, overflow to Inf, subnormals kept, FloatToHalf's NaN).
#ifndef DATAECHO_SRC_ROW_CONVERT_H_
#define DATAECHO_SRC_ROW_CONVERT_H_

#include <cstddef>
#include <cstdint>

namespace dataecho::internal {

// dst[i] = FloatToHalf(src[i]).
void FloatsToHalves(const float* src, uint16_t* dst, size_t n);

// dst[i] = float(src[i]) * a + b, as float32 or float16.
void AffineU8ToF32(const uint8_t* src, float* dst, size_t n, float a, float b);
void AffineU8ToF16(const uint8_t* src, uint16_t* dst, size_t n, float a, float b);

// True if the functions above use AVX2 and F16C on this CPU.
bool HasAvx2F16c();

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_ROW_CONVERT_H_
