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

// Asks the CPU for the first bytes of a row (at most 1 KiB; the hardware
// prefetcher follows a longer row by itself), so that copying it a few rows
// later does not wait on memory: a batch's rows come from wherever the
// upstream left them, a Shuffle's in random order from megabytes of data
// (docs/benchmarks.md, "Prefetching rows"). Always inlined: GCC 12 takes a
// separate function that only prefetches for one without effects and drops
// the calls to it.
// How many rows before its copy a batch asks for a row's bytes.
inline constexpr size_t kPrefetchRowsAhead = 8;
[[gnu::always_inline]] inline void PrefetchRowBytes(const uint8_t* p, size_t n) {
  constexpr size_t kMaxBytes = 1024;
  if (n > kMaxBytes) n = kMaxBytes;
  for (size_t i = 0; i < n; i += 64) __builtin_prefetch(p + i);
}

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_ROW_CONVERT_H_
