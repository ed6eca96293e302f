// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/jpeg.h: JPEG decoding to uint8 HWC tensors and encoding, through
// libjpeg-turbo's TurboJPEG API.
//
//   absl::StatusOr<dataecho::Tensor> image =
//       dataecho::DecodeJpeg(record.data.view(), {}, "gs://b/x.tfrecord:1024");
//   // image->shape() == {height, width, 1 or 3}, dtype uint8
//   absl::StatusOr<std::string> jpeg = dataecho::EncodeJpeg(*image, {.quality = 90});
//
//   // Only a region, at the smallest DCT scale (M/8) that still covers 224x224:
//   absl::StatusOr<dataecho::JpegCrop> crop = dataecho::DecodeJpegCrop(
//       *jpeg, {.y = 40, .x = 60, .height = 300, .width = 280},
//       {.min_height = 224, .min_width = 224});
//   // crop->pixels: uint8 [h, w, 3]; crop->scale_num / 8 is the scale used
//
// Decoding is strict: a corrupt or truncated stream (including what libjpeg
// only warns about, such as a premature end of data) is DATA_LOSS naming
// `context` (pass the record's "uri:offset"); an image with more than
// `max_pixels` pixels is RESOURCE_EXHAUSTED, checked before allocating.
//
// Thread safety: all functions are thread-safe (each thread keeps its own
// TurboJPEG handles).
#ifndef DATAECHO_FORMATS_JPEG_H_
#define DATAECHO_FORMATS_JPEG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/tensor.h"

namespace dataecho {

struct JpegDecodeOptions {
  // Output channels: 0 = as stored (1 for grayscale JPEGs, else 3 RGB),
  // 1 = grayscale, 3 = RGB. CMYK and YCCK JPEGs decode to RGB (Adobe-style
  // inverted CMYK, R = C * K / 255); 1 channel from them is INVALID_ARGUMENT.
  int channels = 0;
  // Larger images (width x height) are RESOURCE_EXHAUSTED, checked before allocating.
  int64_t max_pixels = int64_t{1} << 26;
  // Faster, slightly less accurate integer IDCT.
  bool fast_idct = false;
};

// Decodes `jpeg` into a uint8 tensor [height, width, channels].
DATAECHO_EXPORT absl::StatusOr<Tensor> DecodeJpeg(std::string_view jpeg,
                                                  const JpegDecodeOptions& options = {},
                                                  std::string_view context = "");

// The header fields of a JPEG stream.
struct JpegInfo {
  int height = 0;
  int width = 0;
  int components = 0;  // 1 (grayscale), 3 (YCbCr or RGB) or 4 (CMYK or YCCK)
};

// Reads the header of `jpeg` (no pixel is decoded). DATA_LOSS naming `context`
// if it is not a JPEG stream.
DATAECHO_EXPORT absl::StatusOr<JpegInfo> ReadJpegInfo(std::string_view jpeg,
                                                      std::string_view context = "");

// A rectangle of an image in pixels: rows [y, y + height), columns [x, x + width).
struct CropWindow {
  int64_t y = 0;
  int64_t x = 0;
  int64_t height = 0;
  int64_t width = 0;
};

struct JpegCropOptions {
  // The size the crop will be resized to. The decoder picks the smallest DCT
  // scale M/8, M = 1, 2, 4 or 8, at which the scaled window is still at least
  // min_height x min_width (M = 8, full scale, if the window is smaller than
  // twice that); 0 x 0 decodes at full scale. libjpeg-turbo's scaled IDCT then
  // does most of a large downscale, and a bilinear resize of the rest stays
  // below 2x. (Its 3/8, 5/8, 6/8 and 7/8 IDCTs are not SIMD and were measured
  // slower than a full-scale decode, so they are not used.)
  int64_t min_height = 0;
  int64_t min_width = 0;
  // Output channels: 3 = RGB (grayscale replicated; CMYK/YCCK converted as
  // Adobe-style inverted CMYK, R = C*K/255), 1 = grayscale (color JPEGs give
  // their luminance; CMYK is INVALID_ARGUMENT).
  int channels = 3;
  // Larger images (width x height) are RESOURCE_EXHAUSTED, checked before allocating.
  int64_t max_pixels = int64_t{1} << 26;
  // Faster, slightly less accurate integer IDCT (libjpeg's JDCT_IFAST).
  bool fast_idct = false;
  // Chroma upsampled by replication instead of libjpeg's "fancy" triangle
  // filter (faster; TurboJPEG's TJFLAG_FASTUPSAMPLE).
  bool fast_upsample = false;
};

// A decoded region of a JPEG at a DCT scale.
struct JpegCrop {
  // uint8 [rows, cols, channels]: the scaled image's rows [y0, y0 + rows) and
  // columns [x0, x0 + cols), which cover the scaled window: y0 = floor(y * s),
  // y0 + rows = ceil((y + height) * s) (clamped to the scaled image), the same
  // for columns, with s = scale_num / 8.
  Tensor pixels;
  int scale_num = 8;
  int64_t y0 = 0;
  int64_t x0 = 0;
  // The scaled image's size: ceil(height * s) x ceil(width * s).
  int64_t scaled_height = 0;
  int64_t scaled_width = 0;
};

// Decodes the part of `jpeg` under `window` (in full-scale pixels; clipped to
// the image, INVALID_ARGUMENT if nothing is left) at the scale that
// JpegCropOptions says. Only the iMCU columns under the window go through the
// IDCT and color conversion (libjpeg-turbo's jpeg_crop_scanline), rows above it
// are only entropy-decoded (jpeg_skip_scanlines) and rows below it not at all.
// Errors as DecodeJpeg: DATA_LOSS (also for what libjpeg only warns about),
// RESOURCE_EXHAUSTED over max_pixels.
DATAECHO_EXPORT absl::StatusOr<JpegCrop> DecodeJpegCrop(std::string_view jpeg, CropWindow window,
                                                        const JpegCropOptions& options = {},
                                                        std::string_view context = "");

struct JpegEncodeOptions {
  int quality = 90;  // 1..100
  // Chroma subsampling for RGB images: true = 4:2:0, false = 4:4:4.
  bool subsample_chroma = true;
};

// Encodes a uint8 [height, width, 1 or 3] (or [height, width]) tensor.
// INVALID_ARGUMENT for any other dtype or shape.
DATAECHO_EXPORT absl::StatusOr<std::string> EncodeJpeg(const Tensor& image,
                                                       const JpegEncodeOptions& options = {});

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_JPEG_H_
