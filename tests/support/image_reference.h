// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// image_reference.h: straightforward reference implementations of the image
// paths (crop + bilinear resize + flip + normalize, in double precision, one
// pixel at a time), and real JPEGs to run them on, for the tests of
// RandomResizedCrop and DecodeJpegCrop.
#ifndef DATAECHO_TESTS_SUPPORT_IMAGE_REFERENCE_H_
#define DATAECHO_TESTS_SUPPORT_IMAGE_REFERENCE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dataecho/tensor.h"

namespace dataecho::testing {

// A decoded image as doubles, [height, width, channels].
struct RefImage {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<double> values;
  double at(int64_t y, int64_t x, int64_t c) const {
    return values[static_cast<size_t>((y * width + x) * channels + c)];
  }
};
RefImage ToRef(const Tensor& uint8_image);

// Bilinear resize of the window (fractional, pixel k spans [k, k + 1)) to
// out_h x out_w with half-pixel centres, sampling clamped to the pixels the
// window touches, mirrored if `flip`. Result [out_h, out_w, channels] on the
// 0..255 scale, unrounded.
RefImage RefResize(const RefImage& src, double y, double x, double h, double w, int64_t out_h,
                   int64_t out_w, bool flip);

// Area-average resize (each output pixel the mean of the source area under
// it, partial pixels weighted by coverage): the antialiased reference for
// shrinking. Result [out_h, out_w, channels], unrounded.
RefImage RefResizeArea(const RefImage& src, double y, double x, double h, double w, int64_t out_h,
                       int64_t out_w);

// Every value of a tensor as double (uint8, float32, float16, bfloat16), in
// its memory order.
std::vector<double> Values(const Tensor& t);

// Real photographs as JPEGs (quality 90, 4:2:0): scikit-image's rocket.jpg as
// shipped, and `count` ImageNet-like images (testing/imagenet_like.h, seed 7).
std::vector<std::string> PhotoJpegs(int count);

// A synthetic uint8 [h, w, c] image whose pixel (y, x, k) is value(y, x, k).
Tensor ImageOf(int64_t h, int64_t w, int64_t c,
               const std::function<uint8_t(int64_t y, int64_t x, int64_t k)>& value);

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_IMAGE_REFERENCE_H_
