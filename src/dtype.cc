// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dataecho/float16.h"
#include "fmt/format.h"
#include "row_convert.h"

namespace dataecho {

namespace {

struct DTypeInfo {
  size_t size;
  std::string_view name;
};

DTypeInfo Info(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return {1, "uint8"};
    case DType::kInt32: return {4, "int32"};
    case DType::kInt64: return {8, "int64"};
    case DType::kFloat32: return {4, "float32"};
    case DType::kFloat16: return {2, "float16"};
    case DType::kBFloat16: return {2, "bfloat16"};
  }
  return {0, "unknown"};
}

}  // namespace

size_t DTypeSize(DType dtype) { return Info(dtype).size; }

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }

absl::StatusOr<DType> ParseDType(std::string_view name) {
  constexpr DType kAll[] = {DType::kUInt8,   DType::kInt32,   DType::kInt64,
                            DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  for (DType t : kAll) {
    if (DTypeName(t) == name) return t;
  }
  return absl::InvalidArgumentError(fmt::format(
      "unknown dtype '{}' (one of uint8, int32, int64, float32, float16, bfloat16)", name));
}

float LoadAsFloat(const uint8_t* data, DType dtype, size_t i) {
  switch (dtype) {
    case DType::kUInt8: return static_cast<float>(data[i]);
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      return static_cast<float>(v);
    }
    case DType::kInt64: {
      int64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      return static_cast<float>(v);
    }
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    case DType::kFloat16: {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return HalfToFloat(v);
    }
    case DType::kBFloat16: {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return BFloat16ToFloat(v);
    }
  }
  return 0;
}

namespace {

// Rounded to nearest (halves up) and clamped to [lo, hi].
template <typename Int>
void StoreRounded(const float* src, size_t n, double lo, double hi, uint8_t* dst) {
  for (size_t i = 0; i < n; ++i) {
    const auto v =
        static_cast<Int>(std::clamp(std::floor(static_cast<double>(src[i]) + 0.5), lo, hi));
    std::memcpy(dst + sizeof(Int) * i, &v, sizeof(Int));
  }
}

// y = load(i) * a[c] + b[c] for i in [0, n), c = i % a.size(), passed to
// store(i, y). The load is a template argument so that uint8's inlines.
template <typename LoadFn, typename StoreFn>
void AffineLoop(size_t n, absl::Span<const float> a, absl::Span<const float> b, LoadFn load,
                StoreFn store) {
  const size_t channels = a.size();
  if (channels == 1) {
    const float a0 = a[0], b0 = b[0];
    for (size_t i = 0; i < n; ++i) store(i, load(i) * a0 + b0);
    return;
  }
  for (size_t i = 0; i < n; i += channels) {
    for (size_t c = 0; c < channels; ++c) store(i + c, load(i + c) * a[c] + b[c]);
  }
}

template <typename StoreFn>
void AffineFrom(const uint8_t* src, DType in, size_t n, absl::Span<const float> a,
                absl::Span<const float> b, StoreFn store) {
  if (in == DType::kUInt8) {  // the common case (images)
    AffineLoop(
        n, a, b, [src](size_t i) { return static_cast<float>(src[i]); }, store);
  } else {
    AffineLoop(
        n, a, b, [src, in](size_t i) { return LoadAsFloat(src, in, i); }, store);
  }
}

}  // namespace

void StoreFloats(const float* src, size_t n, DType dtype, uint8_t* dst) {
  switch (dtype) {
    case DType::kFloat32: std::memcpy(dst, src, n * sizeof(float)); return;
    case DType::kFloat16:
      internal::FloatsToHalves(src, reinterpret_cast<uint16_t*>(dst), n);
      return;
    case DType::kBFloat16:
      for (size_t i = 0; i < n; ++i) {
        const uint16_t h = FloatToBFloat16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case DType::kUInt8:
      for (size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<uint8_t>(std::clamp(src[i] + 0.5f, 0.0f, 255.0f));
      }
      return;
    case DType::kInt32: StoreRounded<int32_t>(src, n, -2147483648.0, 2147483647.0, dst); return;
    case DType::kInt64: StoreRounded<int64_t>(src, n, -9.2e18, 9.2e18, dst); return;
  }
}

void AffineRow(const uint8_t* src, DType in, size_t n, absl::Span<const float> a,
               absl::Span<const float> b, DType out, uint8_t* dst) {
  if (in == DType::kUInt8 && a.size() == 1 && out == DType::kFloat32) {
    internal::AffineU8ToF32(src, reinterpret_cast<float*>(dst), n, a[0], b[0]);
  } else if (in == DType::kUInt8 && a.size() == 1 && out == DType::kFloat16) {
    internal::AffineU8ToF16(src, reinterpret_cast<uint16_t*>(dst), n, a[0], b[0]);
  } else if (out == DType::kFloat32) {
    AffineFrom(src, in, n, a, b, [dst](size_t i, float v) { std::memcpy(dst + 4 * i, &v, 4); });
  } else if (out == DType::kBFloat16) {
    AffineFrom(src, in, n, a, b, [dst](size_t i, float v) {
      const uint16_t h = FloatToBFloat16(v);
      std::memcpy(dst + 2 * i, &h, 2);
    });
  } else {  // in float32 a block at a time, then stored in bulk (float16: F16C)
    const size_t block = std::max<size_t>(4096 / a.size(), 1) * a.size();
    thread_local std::vector<float> values;
    values.resize(std::min(block, n));
    const size_t in_size = DTypeSize(in), out_size = DTypeSize(out);
    for (size_t start = 0; start < n; start += block) {
      const size_t len = std::min(block, n - start);
      AffineFrom(src + start * in_size, in, len, a, b, [](size_t i, float v) { values[i] = v; });
      StoreFloats(values.data(), len, out, dst + start * out_size);
    }
  }
}

}  // namespace dataecho
