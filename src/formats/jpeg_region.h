// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/jpeg_region.h (private): the region decoder behind DecodeJpegCrop,
// through libjpeg-turbo's libjpeg API (DCT scaling, jpeg_crop_scanline,
// jpeg_skip_scanlines). It returns the rows as libjpeg wrote them, with their
// stride, so that RandomResizedCrop resizes from them without a compacting copy.
// Also the CMYK to RGB conversion both JPEG decoders use.
//
// Thread safety: thread-safe (each thread keeps its own decompressor).
#ifndef DATAECHO_SRC_FORMATS_JPEG_REGION_H_
#define DATAECHO_SRC_FORMATS_JPEG_REGION_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "dataecho/buffer.h"
#include "dataecho/formats/jpeg.h"

namespace dataecho::internal {

struct JpegRegion {
  MutableBuffer rows;  // `height` rows of `stride` bytes
  size_t stride = 0;
  size_t offset = 0;  // bytes from a row's start to the region's first pixel
  int64_t height = 0;
  int64_t width = 0;  // pixels of the region in a row (from `offset`)
  int channels = 3;
  int scale_num = 8;       // the DCT scale is scale_num / 8
  int64_t y0 = 0, x0 = 0;  // the region's first pixel in the scaled image
  int64_t scaled_height = 0, scaled_width = 0;

  const uint8_t* pixel(int64_t y, int64_t x) const {
    return rows.data() + static_cast<size_t>(y) * stride + offset +
           static_cast<size_t>(x) * static_cast<size_t>(channels);
  }
};

// The DCT scale numerator M (scale M/8, 1..8) DecodeJpegCrop uses for a
// window of height x width resized to at least min_height x min_width.
int JpegScaleFor(int64_t height, int64_t width, int64_t min_height, int64_t min_width);

// Adobe-style (inverted: 255 = no ink, as Photoshop writes it) CMYK pixels as
// RGB, R = C * K / 255 (rounded), ...: how DecodeJpeg and DecodeJpegCrop show
// CMYK and YCCK JPEGs. `rgb` may not overlap `cmyk`.
void AdobeCmykToRgb(const uint8_t* cmyk, uint8_t* rgb, size_t pixels);

// See DecodeJpegCrop (formats/jpeg.h).
absl::StatusOr<JpegRegion> DecodeJpegRegion(std::string_view jpeg, CropWindow window,
                                            const JpegCropOptions& options,
                                            std::string_view context);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_JPEG_REGION_H_
