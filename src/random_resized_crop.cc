// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/random_resized_crop.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "buffer_pool.h"
#include "dataecho/memory.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/jpeg_region.h"
#include "image_resize.h"

namespace dataecho {
namespace {

// Keeps this augmenter's draws independent of others sharing a user seed.
constexpr uint64_t kResizedCropSalt = 0x7272635f63726f70ull;  // "rrc_crop"

bool IsFloat(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16;
}

}  // namespace

RandomResizedCrop::RandomResizedCrop(RandomResizedCropOptions options)
    : Augmenter(std::move(options)),
      outputs_(internal::BufferPool::Create(kDefaultAlignment, kPooledOutputsIdle)) {}

absl::Status RandomResizedCrop::Validate() const {
  const RandomResizedCropOptions& o = options_;
  auto bad = [](std::string what) {
    return absl::InvalidArgumentError("RandomResizedCrop: " + what);
  };
  if (o.height <= 0 || o.width <= 0 || o.height > (1 << 16) || o.width > (1 << 16))
    return bad(fmt::format("output {}x{} must be 1..65536 on each side", o.height, o.width));
  if (!(o.min_scale > 0 && o.min_scale <= o.max_scale && o.max_scale <= 1))
    return bad(fmt::format("scale range [{}, {}] must satisfy 0 < min <= max <= 1", o.min_scale,
                           o.max_scale));
  if (!(o.min_ratio > 0 && o.min_ratio <= o.max_ratio && std::isfinite(o.max_ratio)))
    return bad(
        fmt::format("ratio range [{}, {}] must satisfy 0 < min <= max", o.min_ratio, o.max_ratio));
  if (o.attempts < 1) return bad(fmt::format("attempts must be >= 1, got {}", o.attempts));
  if (!(o.flip_probability >= 0 && o.flip_probability <= 1))
    return bad(fmt::format("flip_probability must be in [0, 1], got {}", o.flip_probability));
  if (o.dtype != DType::kUInt8 && !IsFloat(o.dtype))
    return bad(fmt::format("cannot produce {}", DTypeName(o.dtype)));
  if (IsFloat(o.dtype)) {
    if (o.mean.empty() || o.stddev.empty() || o.mean.size() > 4 || o.stddev.size() > 4)
      return bad(fmt::format("{} means and {} stddevs (1 per channel or 1 for all)", o.mean.size(),
                             o.stddev.size()));
    for (float sd : o.stddev) {
      if (!(sd > 0)) return bad("stddev must be > 0");
    }
  }
  if (o.jpeg.channels != 1 && o.jpeg.channels != 3)
    return bad(fmt::format("jpeg.channels must be 1 or 3, got {}", o.jpeg.channels));
  if (o.max_bytes < 0) return bad(fmt::format("max_bytes must be >= 0, got {}", o.max_bytes));
  // The output buffer with one channel at least (operator() checks the
  // image's channels).
  return CheckShapeBytes("RandomResizedCrop", "output [height, width]", {o.height, o.width},
                         static_cast<int64_t>(DTypeSize(o.dtype)), o.max_bytes,
                         "RandomResizedCropOptions::max_bytes")
      .status();
}

ResizedCropPlan RandomResizedCrop::Plan(const Example& example, int64_t height,
                                        int64_t width) const {
  AugmentRng rng(options_.seed + kResizedCropSalt, example.source_index, example.repeat_index);
  const RandomResizedCropOptions& o = options_;
  ResizedCropPlan plan;
  plan.flip = rng.UniformDouble() < o.flip_probability;
  const double area = static_cast<double>(height) * static_cast<double>(width);
  const double log_min = std::log(o.min_ratio), log_max = std::log(o.max_ratio);
  for (int attempt = 0; attempt < o.attempts; ++attempt) {
    const double target = area * (o.min_scale + (o.max_scale - o.min_scale) * rng.UniformDouble());
    const double ratio = std::exp(log_min + (log_max - log_min) * rng.UniformDouble());
    const int64_t w = std::llround(std::sqrt(target * ratio));
    const int64_t h = std::llround(std::sqrt(target / ratio));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      plan.window.height = h;
      plan.window.width = w;
      plan.window.y = static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(height - h + 1)));
      plan.window.x = static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(width - w + 1)));
      return plan;
    }
  }
  // Fallback: the largest centred crop with the ratio clamped to the range.
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < o.min_ratio) {
    h = std::clamp<int64_t>(std::llround(static_cast<double>(w) / o.min_ratio), 1, height);
  } else if (in_ratio > o.max_ratio) {
    w = std::clamp<int64_t>(std::llround(static_cast<double>(h) * o.max_ratio), 1, width);
  }
  plan.window = {.y = (height - h) / 2, .x = (width - w) / 2, .height = h, .width = w};
  return plan;
}

absl::StatusOr<Example> RandomResizedCrop::operator()(Example example) const {
  DATAECHO_RETURN_IF_ERROR(Validate());
  const RandomResizedCropOptions& o = options_;
  if (o.component < 0 || static_cast<size_t>(o.component) >= example.components.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "RandomResizedCrop: example {} has no component {}", example.source_index, o.component));
  }
  Tensor& t = example.components[static_cast<size_t>(o.component)];
  if (t.dtype() != DType::kUInt8 || t.rank() < 1 || t.rank() > 3 ||
      (t.rank() == 3 && (t.dim(2) < 1 || t.dim(2) > 4)) || t.num_elements() == 0) {
    return absl::InvalidArgumentError(fmt::format(
        "RandomResizedCrop needs a uint8 image [H, W, 1..4] or [H, W], or JPEG bytes [N], got {}{}",
        DTypeName(t.dtype()), ShapeString(t.shape())));
  }
  internal::ImageView view;
  internal::ResizeWindow window;
  ResizedCropPlan plan;
  internal::JpegRegion region;  // owns the decoded pixels of a JPEG input
  if (t.rank() == 1) {
    const std::string_view jpeg = t.buffer().view();
    const std::string context = fmt::format("example {}", example.source_index);
    DATAECHO_ASSIGN_OR_RETURN(const JpegInfo info, ReadJpegInfo(jpeg, context));
    plan = Plan(example, info.height, info.width);
    JpegCropOptions jo = o.jpeg;
    jo.min_height = o.dct_scaling ? o.height : 0;
    jo.min_width = o.dct_scaling ? o.width : 0;
    DATAECHO_ASSIGN_OR_RETURN(region, internal::DecodeJpegRegion(jpeg, plan.window, jo, context));
    view = {.data = region.pixel(0, 0),
            .height = region.height,
            .width = region.width,
            .stride = region.stride,
            .channels = region.channels};
    const double s = region.scale_num / 8.0;
    window = {.y = static_cast<double>(plan.window.y) * s - static_cast<double>(region.y0),
              .x = static_cast<double>(plan.window.x) * s - static_cast<double>(region.x0),
              .height = static_cast<double>(plan.window.height) * s,
              .width = static_cast<double>(plan.window.width) * s};
  } else {
    const int channels = t.rank() == 3 ? static_cast<int>(t.dim(2)) : 1;
    plan = Plan(example, t.dim(0), t.dim(1));
    view = {.data = t.buffer().data(),
            .height = t.dim(0),
            .width = t.dim(1),
            .stride = static_cast<size_t>(t.dim(1)) * static_cast<size_t>(channels),
            .channels = channels};
    window = {.y = static_cast<double>(plan.window.y),
              .x = static_cast<double>(plan.window.x),
              .height = static_cast<double>(plan.window.height),
              .width = static_cast<double>(plan.window.width)};
  }
  const int channels = view.channels;
  if (IsFloat(o.dtype) &&
      ((o.mean.size() != 1 && static_cast<int>(o.mean.size()) != channels) ||
       (o.stddev.size() != 1 && static_cast<int>(o.stddev.size()) != channels))) {
    return absl::InvalidArgumentError(
        fmt::format("RandomResizedCrop: {} means and {} stddevs for {} channels", o.mean.size(),
                    o.stddev.size(), channels));
  }
  internal::ResizeTarget target;
  target.height = o.height;
  target.width = o.width;
  target.dtype = o.dtype;
  target.channels_first = o.channels_first;
  target.flip = plan.flip;
  for (int c = 0; c < channels; ++c) {
    if (!IsFloat(o.dtype)) break;
    const float mean = o.mean[o.mean.size() == 1 ? 0 : static_cast<size_t>(c)];
    const float sd = o.stddev[o.stddev.size() == 1 ? 0 : static_cast<size_t>(c)];
    target.scale[static_cast<size_t>(c)] = o.scale / sd;
    target.bias[static_cast<size_t>(c)] = -mean / sd;
  }
  DATAECHO_ASSIGN_OR_RETURN(
      const int64_t bytes,
      CheckShapeBytes("RandomResizedCrop", "output [height, width, channels]",
                      {o.height, o.width, channels}, static_cast<int64_t>(DTypeSize(o.dtype)),
                      o.max_bytes, "RandomResizedCropOptions::max_bytes"));
  MutableBuffer out = static_cast<size_t>(bytes) >= kPooledOutputBytes
                          ? outputs_->Get(static_cast<size_t>(bytes))
                          : MutableBuffer(static_cast<size_t>(bytes));
  target.out = out.data();
  internal::ResizeBilinear(view, window, target);
  const Shape shape =
      o.channels_first ? Shape{channels, o.height, o.width} : Shape{o.height, o.width, channels};
  DATAECHO_ASSIGN_OR_RETURN(t, Tensor::Make(o.dtype, shape, std::move(out).Freeze()));
  return example;
}

}  // namespace dataecho
