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
  // 1 = grayscale, 3 = RGB.
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
