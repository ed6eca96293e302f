// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dtype.h: element types, and every conversion between them the library
// makes: one element read as float, floats stored as a type, and the affine
// conversion of a whole row (y = x * a + b per channel) that casts and
// normalizes a batch or an image. Batch, the augmenters and RandomResizedCrop
// all convert through these functions.
//
//   // A uint8 image [H, W, 3] to normalized float16, channel by channel:
//   const float a[3] = {1 / (255 * 0.229f), 1 / (255 * 0.224f), 1 / (255 * 0.225f)};
//   const float b[3] = {-0.485f / 0.229f, -0.456f / 0.224f, -0.406f / 0.225f};
//   dataecho::AffineRow(pixels, dataecho::DType::kUInt8, h * w * 3, a, b,
//                       dataecho::DType::kFloat16, out);
//
// The row conversions are vectorized (AVX2 and F16C, checked at run time)
// where they are hot: uint8 to float32 or float16 with one channel, and any
// float row to float16. Every path gives the same bits as the scalar form:
// the affine step is a multiply then an add (never fused), float16 and
// bfloat16 round as FloatToHalf and FloatToBFloat16 (float16.h) do.
//
// All functions are pure and thread-safe.
#ifndef DATAECHO_DTYPE_H_
#define DATAECHO_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dataecho/export.h"

namespace dataecho {

enum class DType : uint8_t { kUInt8, kInt32, kInt64, kFloat32, kFloat16, kBFloat16 };

// Bytes of one element; the name ("uint8", "int32", "int64", "float32",
// "float16", "bfloat16") and back (INVALID_ARGUMENT naming the choices).
DATAECHO_EXPORT size_t DTypeSize(DType dtype);
DATAECHO_EXPORT std::string_view DTypeName(DType dtype);
DATAECHO_EXPORT absl::StatusOr<DType> ParseDType(std::string_view name);

// float32, float16 or bfloat16.
inline bool IsFloatDType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16;
}

// Element i of `data`, an array of `dtype`, as float (int32 and int64 round
// to the nearest float).
DATAECHO_EXPORT float LoadAsFloat(const uint8_t* data, DType dtype, size_t i);

// Stores src[0, n) into `dst` as `dtype`: float32 as they are, float16 and
// bfloat16 rounded to nearest even; integer types rounded to nearest (halves
// up) and clamped to the type's range (uint8: [0, 255]).
DATAECHO_EXPORT void StoreFloats(const float* src, size_t n, DType dtype, uint8_t* dst);

// The affine conversion of n elements: dst[i] = LoadAsFloat(src, in, i) *
// a[c] + b[c] with c = i % a.size(), stored as `out` by StoreFloats.
// REQUIRES: a.size() == b.size() >= 1, n a multiple of a.size().
DATAECHO_EXPORT void AffineRow(const uint8_t* src, DType in, size_t n, absl::Span<const float> a,
                               absl::Span<const float> b, DType out, uint8_t* dst);

}  // namespace dataecho

#endif  // DATAECHO_DTYPE_H_
