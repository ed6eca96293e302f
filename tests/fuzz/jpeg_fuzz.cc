// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Fuzzes JPEG decoding (as stored, gray, RGB) and image-record decoding.
#include <cstdint>
#include <string_view>

#include "dataecho/image_record.h"
#include "dataecho/jpeg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int channels : {0, 1, 3}) {
    dataecho::JpegDecodeOptions options;
    options.channels = channels;
    options.max_pixels = 1 << 22;
    auto image = dataecho::DecodeJpeg(bytes, options, "fuzz");
    if (image.ok() && image->byte_size() != static_cast<size_t>(image->num_elements())) __builtin_trap();
  }
  (void)dataecho::DecodeImageRecord(bytes, "fuzz");
  return 0;
}
