// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// tensor.h: a small dense tensor (dtype, shape, immutable buffer).
//
// A Tensor is a typed view of a Buffer, row-major. Copies share bytes.
//
//   dataecho::MutableBuffer mb(28 * 28);
//   ...fill mb...
//   auto image = dataecho::Tensor::Make(dataecho::DType::kUInt8, {28, 28, 1},
//                                       std::move(mb).Freeze());
//   if (!image.ok()) return image.status();
//   absl::Span<const uint8_t> pixels = image->data<uint8_t>();
//
// Thread safety: a value type; see buffer.h.
#ifndef DATAECHO_TENSOR_H_
#define DATAECHO_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dataecho/buffer.h"
#include "dataecho/dtype.h"
#include "dataecho/export.h"

namespace dataecho {

using Shape = absl::InlinedVector<int64_t, 4>;

// Product of the dimensions (1 for a scalar; 0 with a zero dimension);
// INT64_MAX if it overflows.
DATAECHO_EXPORT int64_t NumElements(absl::Span<const int64_t> shape);
// "[28, 28, 1]".
DATAECHO_EXPORT std::string ShapeString(absl::Span<const int64_t> shape);

class DATAECHO_EXPORT Tensor {
 public:
  Tensor() = default;

  // Checks that `buffer` holds exactly the bytes `dtype` x `shape` needs
  // (INVALID_ARGUMENT otherwise, including negative dimensions).
  static absl::StatusOr<Tensor> Make(DType dtype, Shape shape, Buffer buffer);
  static absl::StatusOr<Tensor> Make(DType dtype, std::initializer_list<int64_t> shape,
                                     Buffer buffer) {
    return Make(dtype, Shape(shape), std::move(buffer));
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i)]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t byte_size() const { return buffer_.size(); }
  const Buffer& buffer() const { return buffer_; }

  // Typed view. REQUIRES: sizeof(T) == DTypeSize(dtype()).
  template <typename T>
  absl::Span<const T> data() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(buffer_.data()),
                               buffer_.size() / sizeof(T));
  }

 private:
  Tensor(DType dtype, Shape shape, Buffer buffer)
      : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)) {}

  DType dtype_ = DType::kUInt8;
  Shape shape_;
  Buffer buffer_;
};

}  // namespace dataecho

#endif  // DATAECHO_TENSOR_H_
