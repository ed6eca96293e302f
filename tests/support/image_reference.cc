// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/image_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "dataecho/float16.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "gtest/gtest.h"
#include "testing/imagenet_like.h"

namespace dataecho::testing {

RefImage ToRef(const Tensor& t) {
  RefImage r;
  r.height = t.dim(0);
  r.width = t.dim(1);
  r.channels = t.rank() == 3 ? t.dim(2) : 1;
  r.values.assign(t.buffer().data(), t.buffer().data() + t.byte_size());
  return r;
}

RefImage RefResize(const RefImage& src, double y, double x, double h, double w, int64_t out_h,
                   int64_t out_w, bool flip) {
  const auto lo = [](double start, int64_t size) {
    return std::clamp<int64_t>(static_cast<int64_t>(std::floor(start)), 0, size - 1);
  };
  const auto hi = [](double end, int64_t low, int64_t size) {
    return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(end)) - 1, low, size - 1);
  };
  const int64_t ylo = lo(y, src.height), yhi = hi(y + h, ylo, src.height);
  const int64_t xlo = lo(x, src.width), xhi = hi(x + w, xlo, src.width);
  RefImage out;
  out.height = out_h;
  out.width = out_w;
  out.channels = src.channels;
  out.values.resize(static_cast<size_t>(out_h * out_w * src.channels));
  for (int64_t oy = 0; oy < out_h; ++oy) {
    const double sy =
        std::clamp(y + (static_cast<double>(oy) + 0.5) * h / static_cast<double>(out_h) - 0.5,
                   static_cast<double>(ylo), static_cast<double>(yhi));
    const int64_t y0 = static_cast<int64_t>(std::floor(sy)), y1 = std::min(y0 + 1, yhi);
    const double fy = sy - static_cast<double>(y0);
    for (int64_t ox = 0; ox < out_w; ++ox) {
      const int64_t mx = flip ? out_w - 1 - ox : ox;
      const double sx =
          std::clamp(x + (static_cast<double>(mx) + 0.5) * w / static_cast<double>(out_w) - 0.5,
                     static_cast<double>(xlo), static_cast<double>(xhi));
      const int64_t x0 = static_cast<int64_t>(std::floor(sx)), x1 = std::min(x0 + 1, xhi);
      const double fx = sx - static_cast<double>(x0);
      for (int64_t c = 0; c < src.channels; ++c) {
        const double top = src.at(y0, x0, c) * (1 - fx) + src.at(y0, x1, c) * fx;
        const double bottom = src.at(y1, x0, c) * (1 - fx) + src.at(y1, x1, c) * fx;
        out.values[static_cast<size_t>((oy * out_w + ox) * src.channels + c)] =
            top * (1 - fy) + bottom * fy;
      }
    }
  }
  return out;
}

RefImage RefResizeArea(const RefImage& src, double y, double x, double h, double w, int64_t out_h,
                       int64_t out_w) {
  // Coverage of source pixel k by [a, b).
  const auto cover = [](int64_t k, double a, double b) {
    return std::max(0.0,
                    std::min(b, static_cast<double>(k + 1)) - std::max(a, static_cast<double>(k)));
  };
  RefImage out;
  out.height = out_h;
  out.width = out_w;
  out.channels = src.channels;
  out.values.assign(static_cast<size_t>(out_h * out_w * src.channels), 0.0);
  for (int64_t oy = 0; oy < out_h; ++oy) {
    const double a = y + h * static_cast<double>(oy) / static_cast<double>(out_h);
    const double b = y + h * static_cast<double>(oy + 1) / static_cast<double>(out_h);
    for (int64_t ox = 0; ox < out_w; ++ox) {
      const double l = x + w * static_cast<double>(ox) / static_cast<double>(out_w);
      const double r = x + w * static_cast<double>(ox + 1) / static_cast<double>(out_w);
      for (int64_t c = 0; c < src.channels; ++c) {
        double sum = 0, area = 0;
        for (int64_t sy = static_cast<int64_t>(std::floor(a));
             sy < static_cast<int64_t>(std::ceil(b)); ++sy) {
          for (int64_t sx = static_cast<int64_t>(std::floor(l));
               sx < static_cast<int64_t>(std::ceil(r)); ++sx) {
            const double wgt = cover(sy, a, b) * cover(sx, l, r);
            sum += wgt * src.at(std::clamp<int64_t>(sy, 0, src.height - 1),
                                std::clamp<int64_t>(sx, 0, src.width - 1), c);
            area += wgt;
          }
        }
        out.values[static_cast<size_t>((oy * out_w + ox) * src.channels + c)] = sum / area;
      }
    }
  }
  return out;
}

std::vector<double> Values(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.num_elements());
  std::vector<double> v(n);
  const uint8_t* p = t.buffer().data();
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::kUInt8: v[i] = p[i]; break;
      case DType::kFloat32: {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        v[i] = f;
        break;
      }
      default: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        v[i] = t.dtype() == DType::kFloat16 ? HalfToFloat(h) : BFloat16ToFloat(h);
      }
    }
  }
  return v;
}

std::vector<std::string> PhotoJpegs(int count) {
  std::vector<std::string> jpegs;
  std::ifstream f(std::string(kSkimageDataDir) + "/rocket.jpg", std::ios::binary);
  jpegs.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  EXPECT_GT(jpegs.back().size(), 1000u) << "rocket.jpg missing: scripts/setup.sh installs it";
  absl::StatusOr<std::vector<Tensor>> photos = LoadPhotos();
  EXPECT_TRUE(photos.ok()) << photos.status();
  if (!photos.ok()) return jpegs;
  const ImagenetLikeOptions options{.seed = 7};
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<LabelledImage> image = MakeImagenetLikeImage(*photos, options, i);
    EXPECT_TRUE(image.ok()) << image.status();
    absl::StatusOr<std::string> jpeg = EncodeJpeg(image->image, {.quality = 90});
    EXPECT_TRUE(jpeg.ok()) << jpeg.status();
    jpegs.push_back(*jpeg);
  }
  return jpegs;
}

Tensor ImageOf(int64_t h, int64_t w, int64_t c,
               const std::function<uint8_t(int64_t y, int64_t x, int64_t k)>& value) {
  MutableBuffer mb(static_cast<size_t>(h * w * c));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k) mb.data()[(y * w + x) * c + k] = value(y, x, k);
  return *Tensor::Make(DType::kUInt8, {h, w, c}, std::move(mb).Freeze());
}

}  // namespace dataecho::testing
