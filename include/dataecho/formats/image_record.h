// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/image_record.h: the record layout `dataecho convert` writes into TFRecord
// shards: one labelled image per record, raw or JPEG.
//
// Layout of a record's payload (all integers little-endian; 32-byte header):
//
//   bytes  0..3   magic "DEIR"
//   byte   4      layout version, 1
//   byte   5      encoding: 0 = raw uint8 pixels (HWC), 1 = JPEG
//   bytes  6..7   0
//   bytes  8..15  int64 label
//   bytes 16..19  uint32 height
//   bytes 20..23  uint32 width
//   bytes 24..27  uint32 channels (1 or 3)
//   bytes 28..31  0
//   bytes 32..    raw: height*width*channels pixel bytes; JPEG: the JPEG stream
//
// Decoding gives an Example with one uint8 component [height, width,
// channels], the label, and the record's source and repeat indices:
//
//   auto pipeline = dataecho::From(dataecho::MakeTFRecordSource(store, shards))
//       .Map(dataecho::DecodeImageRecord, {.parallelism = 4});
//   absl::StatusOr<dataecho::Example> ex = dataecho::DecodeImageRecord(record);
//   auto bare = dataecho::DecodeImageRecordPayload(bytes, "my.bin:0");  // no Record
//
// To decode later (e.g. a RandomResizedCrop that decodes only its window, or
// echo before decoding), EncodedImageRecord keeps a JPEG record's stream as a
// rank-1 uint8 tensor that shares the record's bytes:
//
//   absl::StatusOr<dataecho::Example> enc = dataecho::EncodedImageRecord(record);
//   // enc->components[0]: uint8 [jpeg bytes]; raw records give their pixels
//
// A malformed payload (bad magic, sizes that do not add up, corrupt JPEG, a
// JPEG whose size differs from the header) is DATA_LOSS naming the record's
// uri:offset.
//
// Thread safety: pure functions, thread-safe.
#ifndef DATAECHO_FORMATS_IMAGE_RECORD_H_
#define DATAECHO_FORMATS_IMAGE_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/record.h"
#include "dataecho/tensor.h"

namespace dataecho {

enum class ImageEncoding : uint8_t { kRaw = 0, kJpeg = 1 };

// "raw", "jpeg".
DATAECHO_EXPORT std::string_view ImageEncodingName(ImageEncoding encoding);
// The ImageEncoding ImageEncodingName() names `name`; INVALID_ARGUMENT
// "unknown image encoding '<name>' (one of raw, jpeg)" for any other name.
DATAECHO_EXPORT absl::StatusOr<ImageEncoding> ParseImageEncoding(std::string_view name);

inline constexpr size_t kImageRecordHeaderBytes = 32;

struct ImageRecordOptions {
  ImageEncoding encoding = ImageEncoding::kRaw;
  int jpeg_quality = 90;  // kJpeg only
};

// The payload for `image` (uint8 [H, W, C] or [H, W], C = 1 or 3) and `label`.
DATAECHO_EXPORT absl::StatusOr<std::string> EncodeImageRecord(
    const Tensor& image, int64_t label, const ImageRecordOptions& options = {});

// Decodes a Record, copying its source_index, repeat_index and epoch into the
// Example. One overload on purpose: `.Map(dataecho::DecodeImageRecord)` names
// it without a lambda.
DATAECHO_EXPORT absl::StatusOr<Example> DecodeImageRecord(const Record& record);

// Decodes a bare payload (the pixels are copied: there is no Record buffer to
// share); `context` (e.g. "uri:offset") names it in errors.
DATAECHO_EXPORT absl::StatusOr<Example> DecodeImageRecordPayload(std::string_view payload,
                                                                 std::string_view context = "");

// Like DecodeImageRecord(record), but a JPEG record's image is left encoded:
// component 0 is its JPEG stream as a uint8 [N] tensor sharing the record's
// bytes (nothing is copied or decoded; the stream is checked only when it is
// decoded). Raw records give their pixels as DecodeImageRecord does.
DATAECHO_EXPORT absl::StatusOr<Example> EncodedImageRecord(const Record& record);

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_IMAGE_RECORD_H_
