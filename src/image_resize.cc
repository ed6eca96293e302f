// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dataecho/dtype.h"
#include "row_convert.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dataecho::internal {
namespace {

// Where output coordinate i of an axis samples: between source pixels i0 and
// i1 = min(i0 + 1, hi), weight f on i1.
struct Tap {
  int64_t i0, i1;
  float f;
};

// Taps for `n` outputs over [start, start + size) of a source axis, clamped to
// the source pixels [lo, hi].
void Taps(int64_t n, double start, double size, int64_t lo, int64_t hi, std::vector<Tap>& taps) {
  taps.resize(static_cast<size_t>(n));
  const double scale = size / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    double s = start + (static_cast<double>(i) + 0.5) * scale - 0.5;
    s = std::clamp(s, static_cast<double>(lo), static_cast<double>(hi));
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(s)), hi);
    taps[static_cast<size_t>(i)] = {i0, std::min(i0 + 1, hi),
                                    static_cast<float>(s - static_cast<double>(i0))};
  }
}

// The pixels a window touches on one axis, within [0, size - 1].
void Span(double start, double length, int64_t size, int64_t* lo, int64_t* hi) {
  *lo = std::clamp<int64_t>(static_cast<int64_t>(std::floor(start)), 0, size - 1);
  *hi = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(start + length)) - 1, *lo, size - 1);
}

// Per-thread scratch. The output row is computed in its memory order: value i
// of a row (HWC: x * C + c; CHW: c * width + x) reads the vertically blended
// source row at idx0[i] and idx1[i] (float offsets), weight f[i] on idx1, then
// * scale[i] + bias[i].
struct Scratch {
  std::vector<Tap> xs, ys;
  std::vector<int32_t> idx0, idx1;
  std::vector<float> f, scale, bias, blended, line;
};

// blended[j] = a[j] + (b[j] - a[j]) * w: two source rows blended vertically.
void BlendRows(const uint8_t* a, const uint8_t* b, float w, float* out, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    const float va = a[j];
    out[j] = va + (static_cast<float>(b[j]) - va) * w;
  }
}

// line[i] = (blended[idx0] + (blended[idx1] - blended[idx0]) * f) * scale + bias.
void Horizontal(const Scratch& s, const float* blended, float* line, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float a = blended[s.idx0[i]];
    const float v = a + (blended[s.idx1[i]] - a) * s.f[i];
    line[i] = v * s.scale[i] + s.bias[i];
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void Avx2BlendRows(const uint8_t* a, const uint8_t* b, float w,
                                                       float* out, size_t n) {
  const __m256 vw = _mm256_set1_ps(w);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 va = _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + j))));
    const __m256 vb = _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + j))));
    _mm256_storeu_ps(out + j, _mm256_fmadd_ps(_mm256_sub_ps(vb, va), vw, va));
  }
  BlendRows(a + j, b + j, w, out + j, n - j);
}

__attribute__((target("avx2,fma"))) void Avx2Horizontal(const Scratch& s, const float* blended,
                                                        float* line, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i i0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.idx0.data() + i));
    const __m256i i1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.idx1.data() + i));
    const __m256 a = _mm256_i32gather_ps(blended, i0, 4);
    const __m256 b = _mm256_i32gather_ps(blended, i1, 4);
    const __m256 v = _mm256_fmadd_ps(_mm256_sub_ps(b, a), _mm256_loadu_ps(s.f.data() + i), a);
    _mm256_storeu_ps(line + i, _mm256_fmadd_ps(v, _mm256_loadu_ps(s.scale.data() + i),
                                               _mm256_loadu_ps(s.bias.data() + i)));
  }
  for (; i < n; ++i) {
    const float a = blended[s.idx0[i]];
    const float v = a + (blended[s.idx1[i]] - a) * s.f[i];
    line[i] = v * s.scale[i] + s.bias[i];
  }
}
#endif

}  // namespace

void ResizeBilinear(const ImageView& src, const ResizeWindow& window, const ResizeTarget& target) {
  thread_local Scratch s;
  const int channels = src.channels;
  const int64_t out_h = target.height, out_w = target.width;
  const size_t n = static_cast<size_t>(out_w) * static_cast<size_t>(channels);
  int64_t xlo, xhi, ylo, yhi;
  Span(window.x, window.width, src.width, &xlo, &xhi);
  Span(window.y, window.height, src.height, &ylo, &yhi);
  Taps(out_w, window.x, window.width, xlo, xhi, s.xs);
  Taps(out_h, window.y, window.height, ylo, yhi, s.ys);
  // Blended rows hold source columns [xlo, xhi] only.
  const size_t row_values = static_cast<size_t>(xhi - xlo + 1) * static_cast<size_t>(channels);
  s.blended.resize(row_values + 8);
  s.line.resize(n);
  s.idx0.resize(n);
  s.idx1.resize(n);
  s.f.resize(n);
  s.scale.resize(n);
  s.bias.resize(n);
  const bool u8 = target.dtype == DType::kUInt8;
  for (int64_t x = 0; x < out_w; ++x) {
    const Tap& t = s.xs[static_cast<size_t>(target.flip ? out_w - 1 - x : x)];
    for (int c = 0; c < channels; ++c) {
      const size_t i = target.channels_first ? static_cast<size_t>(c * out_w + x)
                                             : static_cast<size_t>(x * channels + c);
      s.idx0[i] = static_cast<int32_t>((t.i0 - xlo) * channels + c);
      s.idx1[i] = static_cast<int32_t>((t.i1 - xlo) * channels + c);
      s.f[i] = t.f;
      s.scale[i] = u8 ? 1.0f : target.scale[static_cast<size_t>(c)];
      s.bias[i] = u8 ? 0.0f : target.bias[static_cast<size_t>(c)];
    }
  }
#if defined(__x86_64__)
  static const bool avx2 = HasAvx2F16c() && __builtin_cpu_supports("fma");
#endif
  const size_t elem = DTypeSize(target.dtype);
  const size_t plane = static_cast<size_t>(out_h) * static_cast<size_t>(out_w);
  const size_t x_offset = static_cast<size_t>(xlo) * static_cast<size_t>(channels);
  for (int64_t y = 0; y < out_h; ++y) {
    const Tap& t = s.ys[static_cast<size_t>(y)];
    const uint8_t* r0 = src.data + static_cast<size_t>(t.i0) * src.stride + x_offset;
    const uint8_t* r1 = src.data + static_cast<size_t>(t.i1) * src.stride + x_offset;
#if defined(__x86_64__)
    if (avx2) {
      Avx2BlendRows(r0, r1, t.f, s.blended.data(), row_values);
      Avx2Horizontal(s, s.blended.data(), s.line.data(), n);
    } else
#endif
    {
      BlendRows(r0, r1, t.f, s.blended.data(), row_values);
      Horizontal(s, s.blended.data(), s.line.data(), n);
    }
    if (target.channels_first) {
      for (int c = 0; c < channels; ++c) {
        StoreFloats(
            s.line.data() + static_cast<size_t>(c * out_w), static_cast<size_t>(out_w),
            target.dtype,
            target.out + (static_cast<size_t>(c) * plane + static_cast<size_t>(y * out_w)) * elem);
      }
    } else {
      StoreFloats(s.line.data(), n, target.dtype, target.out + static_cast<size_t>(y) * n * elem);
    }
  }
}

}  // namespace dataecho::internal
