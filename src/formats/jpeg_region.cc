// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "formats/jpeg_region.h"

// clang-format off: jpeglib.h needs <cstdio> (FILE) first.
#include <jpeglib.h>
#include <cstdio>
// clang-format on

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <limits>
#include <vector>

#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho::internal {
namespace {

// libjpeg reports errors through error_exit, which must not return: it
// longjmps back to the setjmp of the phase that called libjpeg. The phases
// below hold no object with a destructor across their setjmp (what they need
// is allocated by their callers), so the jump skips no destructor.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void ErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Strict, as DecodeJpeg (TJFLAG_STOPONWARNING): a warning (level -1, e.g.
// premature end of data, a corrupt segment) is an error.
void EmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0) ErrorExit(cinfo);
}

// One decompressor per thread, reused (jpeg_abort_decompress after each image).
struct Decoder {
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  bool created = false;

  Decoder() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = ErrorExit;
    err.pub.emit_message = EmitMessage;
    if (setjmp(err.jump) == 0) {  // out of memory is the only possible error
      jpeg_create_decompress(&cinfo);
      created = true;
    }
  }
  ~Decoder() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
};

Decoder& ThreadDecoder() {
  thread_local Decoder decoder;
  return decoder;
}

// What phase 1 reads from the header.
struct Header {
  int height = 0, width = 0;
  J_COLOR_SPACE color_space = JCS_UNKNOWN;
};

// Phase 1: the header. Returns false with err.message set on error.
bool ReadHeader(Decoder& d, const unsigned char* data, size_t size, Header* header) {
  if (setjmp(d.err.jump) != 0) {
    jpeg_abort_decompress(&d.cinfo);
    return false;
  }
  jpeg_mem_src(&d.cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&d.cinfo, TRUE);
  header->height = static_cast<int>(d.cinfo.image_height);
  header->width = static_cast<int>(d.cinfo.image_width);
  header->color_space = d.cinfo.jpeg_color_space;
  return true;
}

// What phase 2 sets up.
struct Plan {
  J_COLOR_SPACE out_space = JCS_RGB;
  int scale_num = 8;
  bool fast_idct = false, fast_upsample = false;
  JDIMENSION y0 = 0, x0 = 0, width = 0;  // requested scaled rows from y0, columns [x0, x0 + width)
  // Set by phase 2:
  JDIMENSION out_height = 0, out_width = 0;  // the scaled image
  JDIMENSION crop_x = 0, crop_width = 0;     // the columns libjpeg will write (iMCU-aligned)
  int components = 0;                        // per pixel libjpeg writes
};

// Phase 2: scale, start, crop the columns, skip the rows above the region.
bool Start(Decoder& d, Plan* plan) {
  if (setjmp(d.err.jump) != 0) {
    jpeg_abort_decompress(&d.cinfo);
    return false;
  }
  jpeg_decompress_struct& c = d.cinfo;
  c.out_color_space = plan->out_space;
  c.scale_num = static_cast<unsigned>(plan->scale_num);
  c.scale_denom = 8;
  c.dct_method = plan->fast_idct ? JDCT_IFAST : JDCT_ISLOW;
  c.do_fancy_upsampling = plan->fast_upsample ? FALSE : TRUE;
  jpeg_start_decompress(&c);
  plan->out_height = c.output_height;
  plan->out_width = c.output_width;
  // Columns libjpeg decodes: the region and kMargin more on each side. The
  // chroma upsampler treats the ends of the decoded columns as the image's
  // edges; the margin keeps the region's own pixels exact (as in a full
  // decode) for chroma subsampled up to 4x horizontally.
  constexpr JDIMENSION kMargin = 4;
  JDIMENSION x = plan->x0 > kMargin ? plan->x0 - kMargin : 0;
  JDIMENSION w = std::min(plan->x0 + plan->width + kMargin, c.output_width) - x;
  if (x != 0 || w != c.output_width) jpeg_crop_scanline(&c, &x, &w);
  plan->crop_x = x;
  plan->crop_width = w;
  plan->components = c.output_components;
  if (plan->y0 > 0) jpeg_skip_scanlines(&c, plan->y0);
  return true;
}

}  // namespace

void AdobeCmykToRgb(const uint8_t* cmyk, uint8_t* rgb, size_t pixels) {
  for (size_t x = 0; x < pixels; ++x) {
    const unsigned k = cmyk[4 * x + 3];
    for (size_t ch = 0; ch < 3; ++ch)
      rgb[3 * x + ch] = static_cast<uint8_t>((cmyk[4 * x + ch] * k + 127) / 255);
  }
}

namespace {

// Phase 3: `rows` rows into `out` (stride bytes apart). CMYK rows go through
// `cmyk_row` and are converted to RGB.
bool ReadRows(Decoder& d, JDIMENSION rows, uint8_t* out, size_t stride, bool cmyk_to_rgb,
              uint8_t* cmyk_row, JDIMENSION row_pixels) {
  if (setjmp(d.err.jump) != 0) {
    jpeg_abort_decompress(&d.cinfo);
    return false;
  }
  for (JDIMENSION y = 0; y < rows; ++y) {
    uint8_t* dst = out + static_cast<size_t>(y) * stride;
    JSAMPROW row = cmyk_to_rgb ? cmyk_row : dst;
    while (jpeg_read_scanlines(&d.cinfo, &row, 1) != 1) {
    }
    if (cmyk_to_rgb) AdobeCmykToRgb(cmyk_row, dst, row_pixels);
  }
  jpeg_abort_decompress(&d.cinfo);  // the rows below are never decoded
  return true;
}

std::string Where(std::string_view context) {
  return context.empty() ? std::string() : fmt::format(" in {}", context);
}

absl::Status Corrupt(const Decoder& d, std::string_view context) {
  return absl::DataLossError(fmt::format("corrupt JPEG{}: {}", Where(context), d.err.message));
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }  // a >= 0, b > 0

}  // namespace

int JpegScaleFor(int64_t height, int64_t width, int64_t min_height, int64_t min_width) {
  // The smallest M in {1, 2, 4, 8} with window * M / 8 >= min on both sides
  // (no minimum: full scale). libjpeg-turbo 2.1 has SIMD IDCTs for these
  // scales only; 3/8, 5/8, 6/8 and 7/8 run its generic C IDCT, measured slower
  // than decoding at full scale (docs/benchmarks.md).
  if (min_height <= 0 && min_width <= 0) return 8;
  for (int m = 1; m < 8; m *= 2) {
    if (height * m >= 8 * min_height && width * m >= 8 * min_width) return m;
  }
  return 8;
}

absl::StatusOr<JpegRegion> DecodeJpegRegion(std::string_view jpeg, CropWindow window,
                                            const JpegCropOptions& options,
                                            std::string_view context) {
  if (options.channels != 1 && options.channels != 3) {
    return absl::InvalidArgumentError(
        fmt::format("JPEG crop channels must be 1 or 3, got {}", options.channels));
  }
  if (jpeg.size() > std::numeric_limits<unsigned long>::max()) {
    return absl::DataLossError(fmt::format("JPEG too large{}", Where(context)));
  }
  Decoder& d = ThreadDecoder();
  if (!d.created) return absl::ResourceExhaustedError("jpeg_create_decompress failed");
  Header header;
  if (!ReadHeader(d, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), &header))
    return Corrupt(d, context);
  // From here on every return leaves the decompressor idle: Start and
  // ReadRows abort on their own errors, other returns call release().
  auto release = [&d] { jpeg_abort_decompress(&d.cinfo); };
  if (header.width <= 0 || header.height <= 0) {
    release();
    return absl::DataLossError(
        fmt::format("corrupt JPEG{}: {}x{} pixels", Where(context), header.width, header.height));
  }
  if (int64_t{header.width} * header.height > options.max_pixels) {
    release();
    return absl::ResourceExhaustedError(fmt::format("JPEG of {}x{} pixels{} exceeds max_pixels {}",
                                                    header.width, header.height, Where(context),
                                                    options.max_pixels));
  }
  // The window, clipped to the image.
  const int64_t wy0 = std::max<int64_t>(window.y, 0), wx0 = std::max<int64_t>(window.x, 0);
  const int64_t wy1 = std::min<int64_t>(window.y + window.height, header.height);
  const int64_t wx1 = std::min<int64_t>(window.x + window.width, header.width);
  if (window.height <= 0 || window.width <= 0 || wy1 <= wy0 || wx1 <= wx0) {
    release();
    return absl::InvalidArgumentError(
        fmt::format("JPEG crop window {}x{} at ({}, {}) misses the {}x{} image{}", window.height,
                    window.width, window.y, window.x, header.height, header.width, Where(context)));
  }
  const bool cmyk = header.color_space == JCS_CMYK || header.color_space == JCS_YCCK;
  Plan plan;
  if (options.channels == 1) {
    if (cmyk) {
      release();
      return absl::InvalidArgumentError(
          fmt::format("cannot decode the CMYK JPEG{} to 1 channel", Where(context)));
    }
    plan.out_space = JCS_GRAYSCALE;
  } else {
    plan.out_space = cmyk ? JCS_CMYK : JCS_RGB;
  }
  plan.scale_num = JpegScaleFor(wy1 - wy0, wx1 - wx0, options.min_height, options.min_width);
  plan.fast_idct = options.fast_idct;
  plan.fast_upsample = options.fast_upsample;
  const int64_t m = plan.scale_num;
  const int64_t scaled_h = CeilDiv(header.height * m, 8), scaled_w = CeilDiv(header.width * m, 8);
  const int64_t sy0 = wy0 * m / 8, sx0 = wx0 * m / 8;
  const int64_t sy1 = std::min(CeilDiv(wy1 * m, 8), scaled_h);
  const int64_t sx1 = std::min(CeilDiv(wx1 * m, 8), scaled_w);
  plan.y0 = static_cast<JDIMENSION>(sy0);
  plan.x0 = static_cast<JDIMENSION>(sx0);
  plan.width = static_cast<JDIMENSION>(sx1 - sx0);
  if (!Start(d, &plan)) return Corrupt(d, context);
  if (plan.out_height != static_cast<JDIMENSION>(scaled_h) ||
      plan.out_width != static_cast<JDIMENSION>(scaled_w) || plan.crop_x > plan.x0 ||
      plan.crop_x + plan.crop_width < plan.x0 + plan.width) {
    release();
    return absl::InternalError(fmt::format(
        "libjpeg scaled {}x{} by {}/8 to {}x{} (crop {}+{}), expected {}x{} covering {}+{}",
        header.height, header.width, m, plan.out_height, plan.out_width, plan.crop_x,
        plan.crop_width, scaled_h, scaled_w, plan.x0, plan.width));
  }
  JpegRegion r;
  r.channels = options.channels;
  r.stride = static_cast<size_t>(plan.crop_width) * static_cast<size_t>(r.channels);
  r.offset = static_cast<size_t>(plan.x0 - plan.crop_x) * static_cast<size_t>(r.channels);
  r.height = sy1 - sy0;
  r.width = sx1 - sx0;
  r.scale_num = plan.scale_num;
  r.y0 = sy0;
  r.x0 = sx0;
  r.scaled_height = scaled_h;
  r.scaled_width = scaled_w;
  r.rows = MutableBuffer(r.stride * static_cast<size_t>(r.height));
  std::vector<uint8_t> cmyk_row(cmyk ? static_cast<size_t>(plan.crop_width) * 4 : 0);
  if (!ReadRows(d, static_cast<JDIMENSION>(r.height), r.rows.data(), r.stride, cmyk,
                cmyk_row.data(), plan.crop_width))
    return Corrupt(d, context);
  return r;
}

}  // namespace dataecho::internal

namespace dataecho {

absl::StatusOr<JpegCrop> DecodeJpegCrop(std::string_view jpeg, CropWindow window,
                                        const JpegCropOptions& options, std::string_view context) {
  DATAECHO_ASSIGN_OR_RETURN(internal::JpegRegion r,
                            internal::DecodeJpegRegion(jpeg, window, options, context));
  const size_t row_bytes = static_cast<size_t>(r.width) * static_cast<size_t>(r.channels);
  MutableBuffer out(row_bytes * static_cast<size_t>(r.height));
  for (int64_t y = 0; y < r.height; ++y)
    std::memcpy(out.data() + static_cast<size_t>(y) * row_bytes, r.pixel(y, 0), row_bytes);
  JpegCrop crop;
  DATAECHO_ASSIGN_OR_RETURN(
      crop.pixels,
      Tensor::Make(DType::kUInt8, {r.height, r.width, r.channels}, std::move(out).Freeze()));
  crop.scale_num = r.scale_num;
  crop.y0 = r.y0;
  crop.x0 = r.x0;
  crop.scaled_height = r.scaled_height;
  crop.scaled_width = r.scaled_width;
  return crop;
}

}  // namespace dataecho
