// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dataecho/float16.h"
#include "row_convert.h"

namespace dataecho::internal {
namespace {

// Where output coordinate i samples: between source pixels i0 and i1 (both
// already multiplied by the element stride), weight f on i1.
struct Tap {
  int64_t i0, i1;
  float f;
};

// Taps for `n` outputs over [start, start + size) of a source axis, clamped to
// the source pixels [lo, hi]; `mirror` reverses the outputs.
void Taps(int64_t n, double start, double size, int64_t lo, int64_t hi, int64_t step, bool mirror,
          std::vector<Tap>& taps) {
  taps.resize(static_cast<size_t>(n));
  const double scale = size / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t o = mirror ? n - 1 - i : i;
    double s = start + (static_cast<double>(o) + 0.5) * scale - 0.5;
    s = std::clamp(s, static_cast<double>(lo), static_cast<double>(hi));
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(s)), hi);
    const int64_t i1 = std::min(i0 + 1, hi);
    taps[static_cast<size_t>(i)] = {i0 * step, i1 * step,
                                    static_cast<float>(s - static_cast<double>(i0))};
  }
}

// The pixels a window touches on one axis, within [0, size - 1].
void Span(double start, double length, int64_t size, int64_t* lo, int64_t* hi) {
  *lo = std::clamp<int64_t>(static_cast<int64_t>(std::floor(start)), 0, size - 1);
  *hi = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(start + length)) - 1, *lo, size - 1);
}

// One source row interpolated horizontally: out[x * C + c].
template <int C>
void HorizontalRow(const uint8_t* row, const std::vector<Tap>& taps, float* out) {
  const size_t n = taps.size();
  for (size_t x = 0; x < n; ++x) {
    const Tap& t = taps[x];
    const uint8_t* a = row + t.i0;
    const uint8_t* b = row + t.i1;
    for (int c = 0; c < C; ++c) {
      const float va = a[c];
      out[x * C + c] = va + (static_cast<float>(b[c]) - va) * t.f;
    }
  }
}

void HorizontalRow(int channels, const uint8_t* row, const std::vector<Tap>& taps, float* out) {
  switch (channels) {
    case 1: return HorizontalRow<1>(row, taps, out);
    case 2: return HorizontalRow<2>(row, taps, out);
    case 3: return HorizontalRow<3>(row, taps, out);
    default: return HorizontalRow<4>(row, taps, out);
  }
}

// Per-thread scratch: tap tables and float rows.
struct Scratch {
  std::vector<Tap> xs, ys;
  std::vector<float> rows[2], line, scale, bias;
};

}  // namespace

void ResizeBilinear(const ImageView& src, const ResizeWindow& window, const ResizeTarget& target) {
  thread_local Scratch s;
  const int channels = src.channels;
  const int64_t out_h = target.height, out_w = target.width;
  const size_t n = static_cast<size_t>(out_w) * static_cast<size_t>(channels);
  int64_t xlo, xhi, ylo, yhi;
  Span(window.x, window.width, src.width, &xlo, &xhi);
  Span(window.y, window.height, src.height, &ylo, &yhi);
  Taps(out_w, window.x, window.width, xlo, xhi, channels, target.flip, s.xs);
  Taps(out_h, window.y, window.height, ylo, yhi, 1, false, s.ys);
  for (auto& r : s.rows) r.resize(n);
  s.line.resize(n);
  s.scale.resize(n);
  s.bias.resize(n);
  for (size_t i = 0; i < n; ++i) {
    s.scale[i] = target.scale[i % static_cast<size_t>(channels)];
    s.bias[i] = target.bias[i % static_cast<size_t>(channels)];
  }
  // The two horizontally interpolated source rows in s.rows, by source row
  // index (-1: none). Output rows sample non-decreasing source rows, so each
  // source row is interpolated once.
  int64_t tag[2] = {-1, -1};
  auto row = [&](int64_t y) -> const float* {
    for (int k = 0; k < 2; ++k) {
      if (tag[k] == y) return s.rows[k].data();
    }
    const int k = tag[0] < tag[1] ? 0 : 1;  // replace the older (lower) row
    tag[k] = y;
    HorizontalRow(channels, src.data + static_cast<size_t>(y) * src.stride, s.xs, s.rows[k].data());
    return s.rows[k].data();
  };
  const size_t elem = DTypeSize(target.dtype);
  const size_t plane = static_cast<size_t>(out_h) * static_cast<size_t>(out_w);
  float* line = s.line.data();
  const float* scale = s.scale.data();
  const float* bias = s.bias.data();
  for (int64_t y = 0; y < out_h; ++y) {
    const Tap& t = s.ys[static_cast<size_t>(y)];
    const float* r0 = row(t.i0);
    const float* r1 = row(t.i1);
    const float f = t.f;
    if (target.dtype == DType::kUInt8) {
      for (size_t i = 0; i < n; ++i) line[i] = r0[i] + (r1[i] - r0[i]) * f + 0.5f;
    } else {
      for (size_t i = 0; i < n; ++i) line[i] = (r0[i] + (r1[i] - r0[i]) * f) * scale[i] + bias[i];
    }
    // Store: one output row (HWC) or one row of each channel plane (CHW).
    const size_t row_values = target.channels_first ? static_cast<size_t>(out_w) : n;
    const int planes = target.channels_first ? channels : 1;
    const int step = target.channels_first ? channels : 1;
    for (int p = 0; p < planes; ++p) {
      const float* in = line + p;
      uint8_t* out = target.out + ((target.channels_first ? static_cast<size_t>(p) * plane : 0) +
                                   static_cast<size_t>(y) * row_values) *
                                      elem;
      if (step == 1 && target.dtype == DType::kFloat32) {
        std::memcpy(out, in, row_values * sizeof(float));
      } else if (step == 1 && target.dtype == DType::kFloat16) {
        FloatsToHalves(in, reinterpret_cast<uint16_t*>(out), row_values);
      } else {
        for (size_t i = 0; i < row_values; ++i) {
          const float v = in[i * static_cast<size_t>(step)];
          switch (target.dtype) {
            case DType::kUInt8:
              out[i] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));  // v holds +0.5
              break;
            case DType::kFloat32: std::memcpy(out + 4 * i, &v, 4); break;
            case DType::kFloat16: {
              const uint16_t h = FloatToHalf(v);
              std::memcpy(out + 2 * i, &h, 2);
              break;
            }
            default: {
              const uint16_t h = FloatToBFloat16(v);
              std::memcpy(out + 2 * i, &h, 2);
              break;
            }
          }
        }
      }
    }
  }
}

}  // namespace dataecho::internal
