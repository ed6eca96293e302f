// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/jpeg.h"

#include <turbojpeg.h>

#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "fmt/format.h"
#include "formats/jpeg_region.h"

namespace dataecho {
namespace {

struct HandleDeleter {
  void operator()(void* h) const {
    if (h != nullptr) tjDestroy(h);
  }
};
using Handle = std::unique_ptr<void, HandleDeleter>;

tjhandle Decompressor() {
  thread_local Handle h(tjInitDecompress());
  return h.get();
}
tjhandle Compressor() {
  thread_local Handle h(tjInitCompress());
  return h.get();
}

std::string Where(std::string_view context) {
  return context.empty() ? std::string() : fmt::format(" in {}", context);
}

// A JPEG's header, read with the thread's decompressor `h`.
struct Header {
  tjhandle h = nullptr;
  int width = 0, height = 0, colorspace = 0;
};

// The header of `jpeg`: DATA_LOSS for one too large or corrupt, or of no
// pixels; RESOURCE_EXHAUSTED if no decompressor can be made.
absl::StatusOr<Header> ReadHeader(std::string_view jpeg, std::string_view context) {
  Header header;
  header.h = Decompressor();
  if (header.h == nullptr) return absl::ResourceExhaustedError("tjInitDecompress failed");
  if (jpeg.size() > std::numeric_limits<unsigned long>::max()) {
    return absl::DataLossError(fmt::format("JPEG too large{}", Where(context)));
  }
  int subsamp = 0;
  if (tjDecompressHeader3(header.h, reinterpret_cast<const unsigned char*>(jpeg.data()),
                          static_cast<unsigned long>(jpeg.size()), &header.width, &header.height,
                          &subsamp, &header.colorspace) != 0) {
    return absl::DataLossError(
        fmt::format("corrupt JPEG{}: {}", Where(context), tjGetErrorStr2(header.h)));
  }
  if (header.width <= 0 || header.height <= 0) {
    return absl::DataLossError(
        fmt::format("corrupt JPEG{}: {}x{} pixels", Where(context), header.width, header.height));
  }
  return header;
}

}  // namespace

absl::StatusOr<Tensor> DecodeJpeg(std::string_view jpeg, const JpegDecodeOptions& options,
                                  std::string_view context) {
  if (options.channels != 0 && options.channels != 1 && options.channels != 3) {
    return absl::InvalidArgumentError(
        fmt::format("JPEG channels must be 0, 1 or 3, got {}", options.channels));
  }
  absl::StatusOr<Header> header = ReadHeader(jpeg, context);
  if (!header.ok()) return header.status();
  tjhandle h = header->h;
  const int width = header->width, height = header->height, colorspace = header->colorspace;
  const auto* src = reinterpret_cast<const unsigned char*>(jpeg.data());
  if (int64_t{width} * height > options.max_pixels) {
    return absl::ResourceExhaustedError(fmt::format("JPEG of {}x{} pixels{} exceeds max_pixels {}",
                                                    width, height, Where(context),
                                                    options.max_pixels));
  }
  int channels = options.channels;
  if (channels == 0) channels = colorspace == TJCS_GRAY ? 1 : 3;
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  const int flags =
      TJFLAG_STOPONWARNING | (options.fast_idct ? TJFLAG_FASTDCT : TJFLAG_ACCURATEDCT);
  MutableBuffer out(pixels * static_cast<size_t>(channels));
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    // TurboJPEG gives such images only as CMYK: convert them to RGB as
    // DecodeJpegCrop does.
    if (channels == 1) {
      return absl::InvalidArgumentError(
          fmt::format("cannot decode the CMYK JPEG{} to 1 channel", Where(context)));
    }
    std::vector<uint8_t> cmyk(pixels * 4);
    if (tjDecompress2(h, src, static_cast<unsigned long>(jpeg.size()), cmyk.data(), width,
                      width * 4, height, TJPF_CMYK, flags) != 0) {
      return absl::DataLossError(
          fmt::format("corrupt JPEG{}: {}", Where(context), tjGetErrorStr2(h)));
    }
    internal::AdobeCmykToRgb(cmyk.data(), out.data(), pixels);
  } else if (tjDecompress2(h, src, static_cast<unsigned long>(jpeg.size()), out.data(), width,
                           width * channels, height, channels == 1 ? TJPF_GRAY : TJPF_RGB,
                           flags) != 0) {
    return absl::DataLossError(
        fmt::format("corrupt JPEG{}: {}", Where(context), tjGetErrorStr2(h)));
  }
  return Tensor::Make(DType::kUInt8, {height, width, channels}, std::move(out).Freeze());
}

absl::StatusOr<JpegInfo> ReadJpegInfo(std::string_view jpeg, std::string_view context) {
  absl::StatusOr<Header> header = ReadHeader(jpeg, context);
  if (!header.ok()) return header.status();
  const int colorspace = header->colorspace;
  JpegInfo info;
  info.height = header->height;
  info.width = header->width;
  info.components = colorspace == TJCS_GRAY                              ? 1
                    : colorspace == TJCS_CMYK || colorspace == TJCS_YCCK ? 4
                                                                         : 3;
  return info;
}

absl::StatusOr<std::string> EncodeJpeg(const Tensor& image, const JpegEncodeOptions& options) {
  const int rank = image.rank();
  if (image.dtype() != DType::kUInt8 || (rank != 2 && rank != 3)) {
    return absl::InvalidArgumentError(
        fmt::format("EncodeJpeg needs uint8 [H, W] or [H, W, C], got {}{}",
                    DTypeName(image.dtype()), ShapeString(image.shape())));
  }
  const int64_t height = image.dim(0), width = image.dim(1),
                channels = rank == 3 ? image.dim(2) : 1;
  if ((channels != 1 && channels != 3) || height <= 0 || width <= 0 || height > 65535 ||
      width > 65535) {
    return absl::InvalidArgumentError(
        fmt::format("EncodeJpeg cannot encode shape {}", ShapeString(image.shape())));
  }
  if (options.quality < 1 || options.quality > 100) {
    return absl::InvalidArgumentError(
        fmt::format("JPEG quality must be 1..100, got {}", options.quality));
  }
  tjhandle h = Compressor();
  if (h == nullptr) return absl::ResourceExhaustedError("tjInitCompress failed");
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int subsamp =
      channels == 1 ? TJSAMP_GRAY : (options.subsample_chroma ? TJSAMP_420 : TJSAMP_444);
  const int rc = tjCompress2(h, image.buffer().data(), static_cast<int>(width),
                             static_cast<int>(width * channels), static_cast<int>(height),
                             channels == 1 ? TJPF_GRAY : TJPF_RGB, &jpeg, &size, subsamp,
                             options.quality, TJFLAG_ACCURATEDCT);
  std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(
      jpeg, [](unsigned char* p) { tjFree(p); });
  if (rc != 0)
    return absl::InternalError(fmt::format("JPEG encoding failed: {}", tjGetErrorStr2(h)));
  return std::string(reinterpret_cast<const char*>(jpeg), size);
}

}  // namespace dataecho
