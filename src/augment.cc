// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/augment.h"

#include <algorithm>
#include <cstring>

#include "dataecho/internal/random.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

// SplitMix64's finalizer: a bijective 64-bit mix.
inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Salts keep augmenters that share a user seed independent.
constexpr uint64_t kCropSalt = 0x63726f70ull;     // "crop"
constexpr uint64_t kFlipSalt = 0x666c6970ull;     // "flip"
constexpr uint64_t kEpochSalt = 0x65706f6368ull;  // "epoch"

// The image geometry of a [H, W] or [H, W, C] tensor.
struct Geometry {
  int64_t height, width, channels;
  size_t pixel_bytes;  // channels * element size
};

absl::StatusOr<Geometry> ImageGeometry(const Tensor& t, std::string_view who) {
  if (t.rank() != 2 && t.rank() != 3) {
    return absl::InvalidArgumentError(fmt::format(
        "{} needs an image [H, W] or [H, W, C], got shape {}", who, ShapeString(t.shape())));
  }
  Geometry g{t.dim(0), t.dim(1), t.rank() == 3 ? t.dim(2) : 1, 0};
  g.pixel_bytes = static_cast<size_t>(g.channels) * DTypeSize(t.dtype());
  return g;
}

absl::StatusOr<Tensor*> Component(Example& e, int index, std::string_view who) {
  if (index < 0 || static_cast<size_t>(index) >= e.components.size()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: example {} has no component {}", who, e.source_index, index));
  }
  return &e.components[static_cast<size_t>(index)];
}

Shape WithHW(const Tensor& t, int64_t h, int64_t w) {
  Shape s = t.shape();
  s[0] = h;
  s[1] = w;
  return s;
}

// out[i] = in[i] * a[c] + b[c] for channel c = i % channels, in `dtype`.
absl::StatusOr<Tensor> AffineConvert(const Tensor& in, const std::vector<float>& a,
                                     const std::vector<float>& b, DType dtype,
                                     std::string_view who) {
  if (in.dtype() != DType::kUInt8 && !IsFloatDType(in.dtype())) {
    return absl::InvalidArgumentError(fmt::format("{} cannot read {}", who, DTypeName(in.dtype())));
  }
  if (!IsFloatDType(dtype)) {
    return absl::InvalidArgumentError(fmt::format("{} cannot produce {}", who, DTypeName(dtype)));
  }
  const size_t n = static_cast<size_t>(in.num_elements());
  MutableBuffer out(n * DTypeSize(dtype));
  AffineRow(in.buffer().data(), in.dtype(), n, a, b, dtype, out.data());
  return Tensor::Make(dtype, in.shape(), std::move(out).Freeze());
}

}  // namespace

uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c) { return internal::MixSeed(a, b, c); }

AugmentRng::AugmentRng(uint64_t seed, uint64_t source_index, uint32_t repeat_index, uint32_t epoch)
    : state_(Mix(Mix(Mix(seed ^ 0x9e3779b97f4a7c15ull) ^ source_index) ^ repeat_index)) {
  // Epoch 0 keeps the stream of (seed, source_index, repeat_index): outputs of
  // single-pass pipelines stay what they were.
  if (epoch != 0) state_ = Mix(state_ ^ Mix(kEpochSalt + epoch));
}

uint64_t AugmentRng::Next() {
  state_ += 0x9e3779b97f4a7c15ull;
  return Mix(state_);
}

uint64_t AugmentRng::Uniform(uint64_t n) {
  if (n == 0) return 0;
  // Lemire's multiply-shift; the bias is below 2^-32 for the small n used here.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
}

double AugmentRng::UniformDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

absl::StatusOr<Example> RandomCrop::operator()(Example example) const {
  DATAECHO_ASSIGN_OR_RETURN(Tensor* const comp,
                            Component(example, options_.component, "RandomCrop"));
  Tensor& t = *comp;
  DATAECHO_ASSIGN_OR_RETURN(const Geometry g, ImageGeometry(t, "RandomCrop"));
  const int64_t h = options_.height, w = options_.width, p = options_.padding;
  if (h <= 0 || w <= 0 || p < 0 || g.height + 2 * p < h || g.width + 2 * p < w) {
    return absl::InvalidArgumentError(fmt::format(
        "RandomCrop of {}x{} (padding {}) does not fit image {}", h, w, p, ShapeString(t.shape())));
  }
  AugmentRng rng(options_.seed + kCropSalt, example.source_index, example.repeat_index,
                 example.epoch);
  const int64_t oy =
      static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(g.height + 2 * p - h + 1))) - p;
  const int64_t ox =
      static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(g.width + 2 * p - w + 1))) - p;
  const size_t pb = g.pixel_bytes;
  MutableBuffer out(static_cast<size_t>(h * w) * pb);
  std::memset(out.data(), 0, out.size());
  // Columns of the window that fall inside the image.
  const int64_t x0 = std::max<int64_t>(0, -ox), x1 = std::min<int64_t>(w, g.width - ox);
  const uint8_t* src = t.buffer().data();
  for (int64_t y = 0; y < h; ++y) {
    const int64_t sy = oy + y;
    if (sy < 0 || sy >= g.height || x1 <= x0) continue;
    std::memcpy(out.data() + static_cast<size_t>(y * w + x0) * pb,
                src + static_cast<size_t>(sy * g.width + ox + x0) * pb,
                static_cast<size_t>(x1 - x0) * pb);
  }
  DATAECHO_ASSIGN_OR_RETURN(t, Tensor::Make(t.dtype(), WithHW(t, h, w), std::move(out).Freeze()));
  return example;
}

absl::StatusOr<Example> RandomFlip::operator()(Example example) const {
  DATAECHO_ASSIGN_OR_RETURN(Tensor* const comp,
                            Component(example, options_.component, "RandomFlip"));
  Tensor& t = *comp;
  DATAECHO_ASSIGN_OR_RETURN(const Geometry g, ImageGeometry(t, "RandomFlip"));
  AugmentRng rng(options_.seed + kFlipSalt, example.source_index, example.repeat_index,
                 example.epoch);
  if (rng.UniformDouble() >= options_.probability) return example;
  const size_t pb = g.pixel_bytes;
  MutableBuffer out(t.byte_size());
  const uint8_t* src = t.buffer().data();
  for (int64_t y = 0; y < g.height; ++y) {
    const uint8_t* row = src + static_cast<size_t>(y * g.width) * pb;
    uint8_t* dst = out.data() + static_cast<size_t>(y * g.width) * pb;
    if (pb == 1) {  // one uint8 channel (grayscale): a vectorizable byte reversal
      std::reverse_copy(row, row + g.width, dst);
      continue;
    }
    for (int64_t x = 0; x < g.width; ++x) {
      std::memcpy(dst + static_cast<size_t>(x) * pb,
                  row + static_cast<size_t>(g.width - 1 - x) * pb, pb);
    }
  }
  DATAECHO_ASSIGN_OR_RETURN(t, Tensor::Make(t.dtype(), t.shape(), std::move(out).Freeze()));
  return example;
}

absl::StatusOr<Example> Normalize::operator()(Example example) const {
  DATAECHO_ASSIGN_OR_RETURN(Tensor* const comp,
                            Component(example, options_.component, "Normalize"));
  Tensor& t = *comp;
  const int64_t channels = t.rank() >= 3 ? t.dim(t.rank() - 1) : 1;
  const size_t nc = std::max(options_.mean.size(), options_.stddev.size());
  if (options_.mean.empty() || options_.stddev.empty() ||
      (options_.mean.size() != 1 && options_.mean.size() != nc) ||
      (options_.stddev.size() != 1 && options_.stddev.size() != nc) ||
      (nc != 1 && static_cast<int64_t>(nc) != channels)) {
    return absl::InvalidArgumentError(
        fmt::format("Normalize: {} means and {} stddevs for {} channels", options_.mean.size(),
                    options_.stddev.size(), channels));
  }
  std::vector<float> a(nc), b(nc);
  for (size_t c = 0; c < nc; ++c) {
    const float mean = options_.mean[options_.mean.size() == 1 ? 0 : c];
    const float sd = options_.stddev[options_.stddev.size() == 1 ? 0 : c];
    if (!(sd > 0.0f)) return absl::InvalidArgumentError("Normalize: stddev must be > 0");
    a[c] = options_.scale / sd;
    b[c] = -mean / sd;
  }
  DATAECHO_ASSIGN_OR_RETURN(t, AffineConvert(t, a, b, options_.dtype, "Normalize"));
  return example;
}

absl::StatusOr<Example> Cast::operator()(Example example) const {
  DATAECHO_ASSIGN_OR_RETURN(Tensor* const comp, Component(example, options_.component, "Cast"));
  Tensor& t = *comp;
  DATAECHO_ASSIGN_OR_RETURN(t, AffineConvert(t, {options_.scale}, {0.0f}, options_.dtype, "Cast"));
  return example;
}

}  // namespace dataecho
