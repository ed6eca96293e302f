// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "row_convert.h"

#include "dataecho/float16.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace dataecho::internal {
namespace {

void ScalarFloatsToHalves(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = FloatToHalf(src[i]);
}

// The library is built for the x86-64 baseline, where these loops stay
// scalar; the AVX2/F16C versions below run 8 values per instruction
// (BM_BatchCastFP16 in docs/benchmarks.md).
inline float Affine(uint8_t x, float a, float b) {
  const float m = static_cast<float>(x) * a;
  return m + b;
}

#if defined(__x86_64__)
__attribute__((target("avx2,f16c"))) inline __m256 Affine8(const uint8_t* src, __m256 a, __m256 b) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
  const __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
  return _mm256_add_ps(_mm256_mul_ps(x, a), b);  // not fused: the same rounding as Affine()
}

constexpr int kHalfRounding = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__attribute__((target("avx2,f16c"))) void Avx2FloatsToHalves(const float* src, uint16_t* dst,
                                                             size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) !=
        0) {  // a NaN: FloatToHalf's encoding
      ScalarFloatsToHalves(src + i, dst + i, 8);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(v, kHalfRounding));
  }
  ScalarFloatsToHalves(src + i, dst + i, n - i);
}

__attribute__((target("avx2,f16c"))) void Avx2AffineU8ToF32(const uint8_t* src, float* dst,
                                                            size_t n, float a, float b) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, Affine8(src + i, va, vb));
  for (; i < n; ++i) dst[i] = Affine(src[i], a, b);
}

__attribute__((target("avx2,f16c"))) void Avx2AffineU8ToF16(const uint8_t* src, uint16_t* dst,
                                                            size_t n, float a, float b) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = Affine8(src + i, va, vb);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {  // NaN (a or b is): scalar
      for (size_t k = i; k < i + 8; ++k) dst[k] = FloatToHalf(Affine(src[k], a, b));
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(v, kHalfRounding));
  }
  for (; i < n; ++i) dst[i] = FloatToHalf(Affine(src[i], a, b));
}
#endif

}  // namespace

bool HasAvx2F16c() {
#if defined(__x86_64__)
  static const bool has = [] {
    // (Clang's __builtin_cpu_supports does not know "f16c": ask cpuid.)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return has;
#else
  return false;
#endif
}

void FloatsToHalves(const float* src, uint16_t* dst, size_t n) {
#if defined(__x86_64__)
  if (HasAvx2F16c()) return Avx2FloatsToHalves(src, dst, n);
#endif
  ScalarFloatsToHalves(src, dst, n);
}

void AffineU8ToF32(const uint8_t* src, float* dst, size_t n, float a, float b) {
#if defined(__x86_64__)
  if (HasAvx2F16c()) return Avx2AffineU8ToF32(src, dst, n, a, b);
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = Affine(src[i], a, b);
}

void AffineU8ToF16(const uint8_t* src, uint16_t* dst, size_t n, float a, float b) {
#if defined(__x86_64__)
  if (HasAvx2F16c()) return Avx2AffineU8ToF16(src, dst, n, a, b);
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = FloatToHalf(Affine(src[i], a, b));
}

}  // namespace dataecho::internal
