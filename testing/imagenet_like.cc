// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "testing/imagenet_like.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>

#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/internal/random.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho::testing {
namespace {

// The natural colour photographs of scikit-image's sample data (its
// synthetic, grayscale and binary images are left out).
constexpr std::string_view kPhotos[] = {
    "astronaut.png", "chelsea.png",         "coffee.png",
    "rocket.jpg",    "motorcycle_left.png", "motorcycle_right.png",
    "ihc.png",       "retina.jpg",          "hubble_deep_field.jpg"};

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

absl::StatusOr<Tensor> ReadPng(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    return absl::DataLossError(fmt::format("cannot read PNG {}: {}", path, image.message));
  }
  image.format = PNG_FORMAT_RGB;
  MutableBuffer pixels(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr) == 0) {
    png_image_free(&image);
    return absl::DataLossError(fmt::format("cannot decode PNG {}: {}", path, image.message));
  }
  return Tensor::Make(DType::kUInt8,
                      {static_cast<int64_t>(image.height), static_cast<int64_t>(image.width), 3},
                      std::move(pixels).Freeze());
}

// Integer box shrink by `f` (photos larger than the largest output by far).
Tensor Shrink(const Tensor& t, int64_t f) {
  const int64_t h = t.dim(0) / f, w = t.dim(1) / f, W = t.dim(1);
  MutableBuffer out(static_cast<size_t>(h * w * 3));
  const uint8_t* src = t.buffer().data();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t c = 0; c < 3; ++c) {
        int64_t sum = 0;
        for (int64_t dy = 0; dy < f; ++dy) {
          for (int64_t dx = 0; dx < f; ++dx) sum += src[((y * f + dy) * W + x * f + dx) * 3 + c];
        }
        out.data()[(y * w + x) * 3 + c] = static_cast<uint8_t>((sum + f * f / 2) / (f * f));
      }
    }
  }
  return *Tensor::Make(DType::kUInt8, {h, w, 3}, std::move(out).Freeze());
}

// Triangle-filter weights (a bilinear filter widened by the shrink factor, as
// PIL's BILINEAR): output i of n samples [start, start + size) of an axis of
// `extent` pixels.
struct Taps {
  std::vector<int64_t> first;
  std::vector<std::vector<float>> weights;
};
Taps Triangle(int64_t n, double start, double size, int64_t extent) {
  Taps t;
  const double scale = size / static_cast<double>(n);
  const double support = std::max(1.0, scale);
  for (int64_t i = 0; i < n; ++i) {
    const double center = start + (static_cast<double>(i) + 0.5) * scale;
    const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(center - support)));
    const int64_t hi =
        std::min<int64_t>(extent - 1, static_cast<int64_t>(std::ceil(center + support)));
    std::vector<float> w;
    double total = 0;
    for (int64_t k = lo; k <= hi; ++k) {
      const double v =
          std::max(0.0, 1.0 - std::abs((static_cast<double>(k) + 0.5 - center) / support));
      w.push_back(static_cast<float>(v));
      total += v;
    }
    if (total <= 0) {  // cannot happen for support >= 1; keep the nearest pixel
      w.assign(w.size(), 0.0f);
      w[0] = 1;
      total = 1;
    }
    for (float& v : w) v = static_cast<float>(v / total);
    t.first.push_back(lo);
    t.weights.push_back(std::move(w));
  }
  return t;
}

std::string CacheName(const ImagenetLikeOptions& o) {
  std::string name = fmt::format("imagenet-like-{}-s{}", o.images, o.seed);
  if (o.min_side != 300 || o.max_side != 500 || o.quality != 90 || o.shards != 8)
    name += fmt::format("-{}to{}-q{}-n{}", o.min_side, o.max_side, o.quality, o.shards);
  return name;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> LoadPhotos(const std::string& photo_dir) {
  std::vector<Tensor> photos;
  for (std::string_view name : kPhotos) {
    const std::string path = fmt::format("{}/{}", photo_dir, name);
    if (!std::filesystem::exists(path)) {
      return absl::NotFoundError(fmt::format(
          "{} not found: the photographs come from Debian's python3-skimage (scripts/setup.sh)",
          path));
    }
    Tensor t;
    if (name.ends_with(".png")) {
      DATAECHO_ASSIGN_OR_RETURN(t, ReadPng(path));
    } else {
      DATAECHO_ASSIGN_OR_RETURN(t, DecodeJpeg(ReadFile(path), {.channels = 3}, path));
    }
    const int64_t f = std::max<int64_t>(1, std::min(t.dim(0), t.dim(1)) / 600);
    photos.push_back(f > 1 ? Shrink(t, f) : t);
  }
  return photos;
}

absl::StatusOr<LabelledImage> MakeImagenetLikeImage(const std::vector<Tensor>& photos,
                                                    const ImagenetLikeOptions& o, int64_t index) {
  if (photos.empty()) return absl::InvalidArgumentError("no photographs");
  if (o.min_side < 1 || o.max_side < o.min_side) {
    return absl::InvalidArgumentError(
        fmt::format("sides must satisfy 1 <= min <= max, got {}..{}", o.min_side, o.max_side));
  }
  internal::Rng rng(internal::MixSeed(o.seed, static_cast<uint64_t>(index), 0x696d6e6574ull));
  const Tensor& photo = photos[rng.Below(photos.size())];
  const int64_t span = o.max_side - o.min_side + 1;
  const int64_t out_h = o.min_side + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(span)));
  const int64_t out_w = o.min_side + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(span)));
  const int64_t ph = photo.dim(0), pw = photo.dim(1);
  // A crop of 25-100 % of the photo's area with the output's aspect ratio.
  const double aspect = static_cast<double>(out_w) / static_cast<double>(out_h);
  const double area = (0.25 + 0.75 * rng.Uniform()) * static_cast<double>(ph * pw);
  double cw = std::sqrt(area * aspect), ch = cw / aspect;
  const double fit = std::min({1.0, static_cast<double>(pw) / cw, static_cast<double>(ph) / ch});
  cw *= fit;
  ch *= fit;
  const double cy = rng.Uniform() * (static_cast<double>(ph) - ch);
  const double cx = rng.Uniform() * (static_cast<double>(pw) - cw);
  const bool flip = rng.Uniform() < 0.5;
  float gain[3];
  for (float& g : gain) g = static_cast<float>(0.9 + 0.2 * rng.Uniform());
  const int64_t label = static_cast<int64_t>(rng.Below(1000));

  // Separable resample: rows first (into floats), then columns.
  const Taps xs = Triangle(out_w, cx, cw, pw), ys = Triangle(out_h, cy, ch, ph);
  const int64_t row0 = ys.first.front();
  const int64_t row1 = ys.first.back() + static_cast<int64_t>(ys.weights.back().size());
  std::vector<float> rows(static_cast<size_t>((row1 - row0) * out_w * 3));
  const uint8_t* src = photo.buffer().data();
  for (int64_t y = row0; y < row1; ++y) {
    float* dst = rows.data() + (y - row0) * out_w * 3;
    for (int64_t x = 0; x < out_w; ++x) {
      const int64_t ox = flip ? out_w - 1 - x : x;
      const std::vector<float>& w = xs.weights[static_cast<size_t>(ox)];
      const uint8_t* p = src + (y * pw + xs.first[static_cast<size_t>(ox)]) * 3;
      float acc[3] = {0, 0, 0};
      for (size_t k = 0; k < w.size(); ++k) {
        for (int c = 0; c < 3; ++c) acc[c] += w[k] * p[k * 3 + static_cast<size_t>(c)];
      }
      for (int c = 0; c < 3; ++c) dst[x * 3 + c] = acc[c] * gain[c];
    }
  }
  MutableBuffer out(static_cast<size_t>(out_h * out_w * 3));
  for (int64_t y = 0; y < out_h; ++y) {
    const std::vector<float>& w = ys.weights[static_cast<size_t>(y)];
    const float* base = rows.data() + (ys.first[static_cast<size_t>(y)] - row0) * out_w * 3;
    uint8_t* dst = out.data() + y * out_w * 3;
    for (int64_t i = 0; i < out_w * 3; ++i) {
      float acc = 0;
      for (size_t k = 0; k < w.size(); ++k)
        acc += w[k] * base[static_cast<int64_t>(k) * out_w * 3 + i];
      dst[i] = static_cast<uint8_t>(std::clamp(acc + 0.5f, 0.0f, 255.0f));
    }
  }
  LabelledImage result;
  DATAECHO_ASSIGN_OR_RETURN(
      result.image, Tensor::Make(DType::kUInt8, {out_h, out_w, 3}, std::move(out).Freeze()));
  result.label = label;
  return result;
}

absl::StatusOr<std::vector<std::string>> WriteImagenetLike(const std::string& dir,
                                                           const ImagenetLikeOptions& o) {
  if (o.images < 1 || o.shards < 1 || o.quality < 1 || o.quality > 100) {
    return absl::InvalidArgumentError(fmt::format(
        "imagenet-like set needs images >= 1, shards >= 1, quality 1..100; got {}, {}, {}",
        o.images, o.shards, o.quality));
  }
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<Tensor> photos, LoadPhotos(o.photo_dir));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(fmt::format("cannot create {}: {}", dir, ec.message()));
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<TFRecordWriter>> writers;
  for (int i = 0; i < o.shards; ++i) {
    paths.push_back(fmt::format("{}/train-{:05d}-of-{:05d}.tfrecord", dir, i, o.shards));
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<TFRecordWriter> w,
                              TFRecordWriter::Create(paths.back()));
    writers.push_back(std::move(w));
  }
  for (int64_t i = 0; i < o.images; ++i) {
    DATAECHO_ASSIGN_OR_RETURN(const LabelledImage image, MakeImagenetLikeImage(photos, o, i));
    DATAECHO_ASSIGN_OR_RETURN(
        const std::string payload,
        EncodeImageRecord(image.image, image.label,
                          {.encoding = ImageEncoding::kJpeg, .jpeg_quality = o.quality}));
    DATAECHO_RETURN_IF_ERROR(writers[static_cast<size_t>(i % o.shards)]->Write(payload));
  }
  for (auto& w : writers) DATAECHO_RETURN_IF_ERROR(w->Close());
  return paths;
}

absl::StatusOr<std::vector<std::string>> PrepareImagenetLike(const std::string& cache_root,
                                                             const ImagenetLikeOptions& o) {
  const std::string dir = fmt::format("{}/{}", cache_root, CacheName(o));
  if (std::filesystem::exists(dir + "/DONE")) {
    std::vector<std::string> paths;
    for (int i = 0; i < o.shards; ++i)
      paths.push_back(fmt::format("{}/train-{:05d}-of-{:05d}.tfrecord", dir, i, o.shards));
    return paths;
  }
  DATAECHO_ASSIGN_OR_RETURN(std::vector<std::string> paths, WriteImagenetLike(dir, o));
  std::ofstream(dir + "/DONE") << "complete\n";
  return paths;
}

std::string DefaultCacheRoot() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != 0)
    return std::string(xdg) + "/dataecho";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != 0)
    return std::string(home) + "/.cache/dataecho";
  return "/tmp/dataecho-cache";
}

}  // namespace dataecho::testing
