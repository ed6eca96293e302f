// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/tensor.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fmt/format.h"

namespace dataecho {

int64_t NumElements(absl::Span<const int64_t> shape) {
  // A zero dimension makes it 0 whatever the others are; else it saturates
  // instead of overflowing (a shape from options or data), as
  // SaturatingProduct() (memory.h), with which sizes are checked, does.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<Tensor> Tensor::Make(DType dtype, Shape shape, Buffer buffer) {
  // Overflow-checked element count.
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension in shape ", ShapeString(shape)));
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / 16 / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeString(shape), " overflows"));
    }
    n *= static_cast<uint64_t>(d);
  }
  const uint64_t want = n * DTypeSize(dtype);
  if (want != buffer.size()) {
    return absl::InvalidArgumentError(fmt::format("tensor {}{} needs {} bytes, buffer has {}",
                                                  DTypeName(dtype), ShapeString(shape), want,
                                                  buffer.size()));
  }
  return Tensor(dtype, std::move(shape), std::move(buffer));
}

}  // namespace dataecho
