// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/image_record.h"

#include <cstring>

#include "dataecho/formats/jpeg.h"
#include "dataecho/status_macros.h"
#include "enum_names.h"
#include "fmt/format.h"

namespace dataecho {

namespace {
constexpr internal::EnumNames<ImageEncoding, 2> kImageEncodingNames{"image encoding",
                                                                    {"raw", "jpeg"}};
}  // namespace

std::string_view ImageEncodingName(ImageEncoding encoding) {
  return kImageEncodingNames.Name(encoding, "raw");
}

absl::StatusOr<ImageEncoding> ParseImageEncoding(std::string_view name) {
  return kImageEncodingNames.Parse(name);
}

namespace {

constexpr char kMagic[4] = {'D', 'E', 'I', 'R'};
constexpr uint8_t kVersion = 1;

void Put32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

std::string Named(std::string_view context) {
  return context.empty() ? std::string("image record") : fmt::format("image record at {}", context);
}

}  // namespace

absl::StatusOr<std::string> EncodeImageRecord(const Tensor& image, int64_t label,
                                              const ImageRecordOptions& options) {
  const int rank = image.rank();
  if (image.dtype() != DType::kUInt8 || (rank != 2 && rank != 3) ||
      (rank == 3 && image.dim(2) != 1 && image.dim(2) != 3) || image.dim(0) <= 0 ||
      image.dim(1) <= 0 || image.dim(0) > UINT32_MAX || image.dim(1) > UINT32_MAX) {
    return absl::InvalidArgumentError(
        fmt::format("EncodeImageRecord needs uint8 [H, W, 1|3], got {}{}", DTypeName(image.dtype()),
                    ShapeString(image.shape())));
  }
  std::string out(kImageRecordHeaderBytes, '\0');
  std::memcpy(out.data(), kMagic, 4);
  out[4] = static_cast<char>(kVersion);
  out[5] = static_cast<char>(options.encoding);
  const uint64_t ulabel = static_cast<uint64_t>(label);
  for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<char>(ulabel >> (8 * i));
  Put32(out, 16, static_cast<uint32_t>(image.dim(0)));
  Put32(out, 20, static_cast<uint32_t>(image.dim(1)));
  Put32(out, 24, static_cast<uint32_t>(rank == 3 ? image.dim(2) : 1));
  if (options.encoding == ImageEncoding::kRaw) {
    out.append(image.buffer().view());
  } else if (options.encoding == ImageEncoding::kJpeg) {
    DATAECHO_ASSIGN_OR_RETURN(std::string jpeg,
                              EncodeJpeg(image, {.quality = options.jpeg_quality}));
    out += jpeg;
  } else {
    return absl::InvalidArgumentError("unknown image encoding");
  }
  return out;
}

namespace {

// `owner`, if set, holds `payload`: raw pixels (and with `keep_jpeg`, the
// JPEG stream) then share its storage.
absl::StatusOr<Example> Decode(std::string_view payload, const Buffer* owner,
                               std::string_view context, bool keep_jpeg = false) {
  if (payload.size() < kImageRecordHeaderBytes || std::memcmp(payload.data(), kMagic, 4) != 0) {
    return absl::DataLossError(
        fmt::format("{} does not start with a dataecho image header", Named(context)));
  }
  const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
  if (p[4] != kVersion) {
    return absl::DataLossError(
        fmt::format("{} has unknown layout version {}", Named(context), p[4]));
  }
  uint64_t ulabel = 0;
  for (int i = 7; i >= 0; --i) ulabel = (ulabel << 8) | p[8 + i];
  const uint64_t height = Get32(p + 16), width = Get32(p + 20), channels = Get32(p + 24);
  if (height == 0 || width == 0 || (channels != 1 && channels != 3)) {
    return absl::DataLossError(
        fmt::format("{} has bad geometry {}x{}x{}", Named(context), height, width, channels));
  }
  const std::string_view body = payload.substr(kImageRecordHeaderBytes);
  Example ex;
  ex.label = static_cast<int64_t>(ulabel);
  if (p[5] == static_cast<uint8_t>(ImageEncoding::kRaw)) {
    if (height * width * channels !=
        body.size()) {  // each factor < 2^32: no overflow past 2^64 for channels <= 3
      return absl::DataLossError(fmt::format("{}: {}x{}x{} pixels need {} bytes, record has {}",
                                             Named(context), height, width, channels,
                                             height * width * channels, body.size()));
    }
    DATAECHO_ASSIGN_OR_RETURN(
        Tensor t, Tensor::Make(DType::kUInt8,
                               {static_cast<int64_t>(height), static_cast<int64_t>(width),
                                static_cast<int64_t>(channels)},
                               owner != nullptr ? owner->Slice(kImageRecordHeaderBytes, body.size())
                                                : Buffer::CopyOf(body)));
    ex.components.push_back(std::move(t));
  } else if (p[5] == static_cast<uint8_t>(ImageEncoding::kJpeg) && keep_jpeg) {
    DATAECHO_ASSIGN_OR_RETURN(
        Tensor t, Tensor::Make(DType::kUInt8, {static_cast<int64_t>(body.size())},
                               owner != nullptr ? owner->Slice(kImageRecordHeaderBytes, body.size())
                                                : Buffer::CopyOf(body)));
    ex.components.push_back(std::move(t));
  } else if (p[5] == static_cast<uint8_t>(ImageEncoding::kJpeg)) {
    DATAECHO_ASSIGN_OR_RETURN(Tensor t, DecodeJpeg(body, {.channels = static_cast<int>(channels)},
                                                   context.empty() ? Named(context) : context));
    if (static_cast<uint64_t>(t.dim(0)) != height || static_cast<uint64_t>(t.dim(1)) != width) {
      return absl::DataLossError(fmt::format("{}: JPEG is {}x{}, header says {}x{}", Named(context),
                                             t.dim(1), t.dim(0), width, height));
    }
    ex.components.push_back(std::move(t));
  } else {
    return absl::DataLossError(fmt::format("{} has unknown encoding {}", Named(context), p[5]));
  }
  return ex;
}

}  // namespace

absl::StatusOr<Example> DecodeImageRecordPayload(std::string_view payload,
                                                 std::string_view context) {
  return Decode(payload, nullptr, context);
}

absl::StatusOr<Example> DecodeImageRecord(const Record& record) {
  DATAECHO_ASSIGN_OR_RETURN(Example ex, Decode(record.data.view(), &record.data,
                                               fmt::format("{}:{}", record.uri(), record.offset)));
  ex.source_index = record.source_index;
  ex.repeat_index = record.repeat_index;
  ex.epoch = record.epoch;
  return ex;
}

absl::StatusOr<Example> EncodedImageRecord(const Record& record) {
  DATAECHO_ASSIGN_OR_RETURN(Example ex, Decode(record.data.view(), &record.data,
                                               fmt::format("{}:{}", record.uri(), record.offset),
                                               /*keep_jpeg=*/true));
  ex.source_index = record.source_index;
  ex.repeat_index = record.repeat_index;
  return ex;
}

}  // namespace dataecho
