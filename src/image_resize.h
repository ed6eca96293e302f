// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// image_resize.h (private): the bilinear resize behind RandomResizedCrop, with
// the horizontal flip, the normalization and the cast to the output dtype in
// the same pass over the output.
//
// Sampling is the usual half-pixel-centre bilinear (OpenCV's INTER_LINEAR,
// PyTorch's interpolate(align_corners=False) without antialiasing): output
// pixel (y, x) samples the window at
//   sy = window.y + (y + 0.5) * window.height / out_height - 0.5
// (the same for x), clamped to the pixels the window touches
// ([floor(window.y), ceil(window.y + window.height) - 1], within the view),
// so a crop never blends in pixels outside it. Arithmetic is float32.
//
// Thread safety: thread-safe (scratch space is per thread).
#ifndef DATAECHO_SRC_IMAGE_RESIZE_H_
#define DATAECHO_SRC_IMAGE_RESIZE_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "dataecho/tensor.h"

namespace dataecho::internal {

// A uint8 image in memory: rows `stride` bytes apart, `channels` (1..4)
// interleaved values per pixel.
struct ImageView {
  const uint8_t* data = nullptr;
  int64_t height = 0;
  int64_t width = 0;
  size_t stride = 0;
  int channels = 3;
};

// A window in the view's pixel coordinates, fractional (pixel k spans [k, k + 1)).
struct ResizeWindow {
  double y = 0, x = 0, height = 0, width = 0;
};

struct ResizeTarget {
  int64_t height = 0;
  int64_t width = 0;
  // kUInt8: the sampled value rounded (no affine step); kFloat32, kFloat16,
  // kBFloat16: value * scale[c] + bias[c], then rounded to nearest even.
  DType dtype = DType::kUInt8;
  bool channels_first = false;  // [C, H, W] instead of [H, W, C]
  bool flip = false;            // mirror left-right
  std::array<float, 4> scale = {1, 1, 1, 1};
  std::array<float, 4> bias = {0, 0, 0, 0};
  // height * width * channels values of dtype.
  uint8_t* out = nullptr;
};

// REQUIRES: the view is non-empty, the window overlaps it and has a positive
// size, target.height and target.width > 0.
void ResizeBilinear(const ImageView& src, const ResizeWindow& window, const ResizeTarget& target);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_IMAGE_RESIZE_H_
