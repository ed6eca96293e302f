// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "testing/synthetic_images.h"

#include <utility>

#include "dataecho/buffer.h"
#include "dataecho/tensor.h"

namespace dataecho::testing {

std::vector<Example> SyntheticImages(int64_t n, int64_t height, int64_t width) {
  std::vector<Example> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    MutableBuffer b(static_cast<size_t>(height * width));
    for (size_t j = 0; j < b.size(); ++j) b.data()[j] = static_cast<uint8_t>(i * 31 + j);
    Example e;
    e.components.push_back(*Tensor::Make(DType::kUInt8, {height, width, 1}, std::move(b).Freeze()));
    e.label = i % 10;
    e.source_index = static_cast<uint64_t>(i);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace dataecho::testing
