// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// RandomResizedCrop against a straightforward reference (support/image_reference.h:
// double-precision bilinear, one pixel at a time) on real photographs, from
// decoded pixels and straight from the JPEG (DCT-scaled region decoding);
// outputs beyond the memory cap.
#include "dataecho/random_resized_crop.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/memory.h"
#include "gtest/gtest.h"
#include "support/image_reference.h"

namespace dataecho {
namespace {

using testing::RefImage;
using testing::RefResize;
using testing::ToRef;
using testing::Values;

Example ImageExample(Tensor t, uint64_t source_index, uint32_t repeat_index = 0) {
  Example e;
  e.components.push_back(std::move(t));
  e.source_index = source_index;
  e.repeat_index = repeat_index;
  return e;
}

Example JpegExample(const std::string& jpeg, uint64_t source_index, uint32_t repeat_index = 0) {
  return ImageExample(
      *Tensor::Make(DType::kUInt8, {static_cast<int64_t>(jpeg.size())}, Buffer::CopyOf(jpeg)),
      source_index, repeat_index);
}

// Full decode at DCT scale m/8 through TurboJPEG (the same libjpeg-turbo
// kernels, but the whole image, no crop_scanline/skip_scanlines).
Tensor ScaledDecode(const std::string& jpeg, int m) {
  tjhandle h = tjInitDecompress();
  int w = 0, ht = 0, sub = 0, cs = 0;
  const auto* src = reinterpret_cast<const unsigned char*>(jpeg.data());
  EXPECT_EQ(tjDecompressHeader3(h, src, jpeg.size(), &w, &ht, &sub, &cs), 0);
  const int sw = (w * m + 7) / 8, sh = (ht * m + 7) / 8;
  MutableBuffer out(static_cast<size_t>(sw * sh * 3));
  EXPECT_EQ(
      tjDecompress2(h, src, jpeg.size(), out.data(), sw, sw * 3, sh, TJPF_RGB, TJFLAG_ACCURATEDCT),
      0)
      << tjGetErrorStr2(h);
  tjDestroy(h);
  return *Tensor::Make(DType::kUInt8, {sh, sw, 3}, std::move(out).Freeze());
}

struct Diff {
  double max = 0, mean = 0;
};
Diff Compare(const std::vector<double>& got, const std::vector<double>& want) {
  Diff d;
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double e = std::abs(got[i] - want[i]);
    d.max = std::max(d.max, e);
    d.mean += e;
  }
  d.mean /= static_cast<double>(std::max<size_t>(1, got.size()));
  return d;
}

class RandomResizedCropTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { jpegs_ = new std::vector<std::string>(testing::PhotoJpegs(3)); }
  static void TearDownTestSuite() { delete jpegs_; }
  static const std::vector<std::string>& jpegs() { return *jpegs_; }

 private:
  static std::vector<std::string>* jpegs_;
};
std::vector<std::string>* RandomResizedCropTest::jpegs_ = nullptr;

// From decoded pixels, uint8 out: the reference rounded, off by at most one
// level where float32 and double round a value near .5 differently.
TEST_F(RandomResizedCropTest, DecodedPixelsMatchTheReference) {
  RandomResizedCrop rrc({.flip_probability = 0.5, .seed = 3});
  int flips = 0, exact = 0, total = 0;
  for (const std::string& jpeg : jpegs()) {
    const Tensor image = *DecodeJpeg(jpeg);
    const RefImage ref = ToRef(image);
    for (uint32_t k = 0; k < 6; ++k) {
      const Example in = ImageExample(image, 11, k);
      const ResizedCropPlan plan = rrc.Plan(in, image.dim(0), image.dim(1));
      absl::StatusOr<Example> out = rrc(in);
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->components[0].shape(), Shape({224, 224, 3}));
      const CropWindow& w = plan.window;
      RefImage want = RefResize(ref, static_cast<double>(w.y), static_cast<double>(w.x),
                                static_cast<double>(w.height), static_cast<double>(w.width), 224,
                                224, plan.flip);
      for (double& v : want.values) v = std::floor(v + 0.5);
      const std::vector<double> got = Values(out->components[0]);
      EXPECT_LE(Compare(got, want.values).max, 1.0);
      for (size_t i = 0; i < got.size(); ++i) exact += got[i] == want.values[i] ? 1 : 0;
      total += static_cast<int>(got.size());
      flips += plan.flip ? 1 : 0;
    }
  }
  EXPECT_GT(exact, total * 99 / 100);  // off-by-one only at rounding ties
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, 24);
}

// Normalized float outputs, both layouts. The resize runs in float32 on
// values <= 255 (error below 255 * 2^-21 = 1.2e-4 on the 0..255 scale, 3e-6
// after the ImageNet scale 1 / (255 * 0.225)); FP16 and BF16 then round once
// (relative 2^-11 and 2^-8; the values are within +-2.7).
TEST_F(RandomResizedCropTest, NormalizedOutputsMatchTheReference) {
  const Tensor image = *DecodeJpeg(jpegs()[1]);
  const RefImage ref = ToRef(image);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (bool chw : {false, true}) {
      RandomResizedCrop rrc({.height = 160,
                             .width = 192,
                             .flip_probability = 0.5,
                             .dtype = dtype,
                             .mean = kImagenetMean,
                             .stddev = kImagenetStddev,
                             .channels_first = chw,
                             .seed = 5});
      const Example in = ImageExample(image, 2, 1);
      const ResizedCropPlan plan = rrc.Plan(in, image.dim(0), image.dim(1));
      absl::StatusOr<Example> out = rrc(in);
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& t = out->components[0];
      EXPECT_EQ(t.dtype(), dtype);
      EXPECT_EQ(t.shape(), chw ? Shape({3, 160, 192}) : Shape({160, 192, 3}));
      const CropWindow& w = plan.window;
      const RefImage r = RefResize(ref, static_cast<double>(w.y), static_cast<double>(w.x),
                                   static_cast<double>(w.height), static_cast<double>(w.width), 160,
                                   192, plan.flip);
      std::vector<double> want(r.values.size());
      for (int64_t y = 0; y < 160; ++y) {
        for (int64_t x = 0; x < 192; ++x) {
          for (int64_t c = 0; c < 3; ++c) {
            const size_t at =
                static_cast<size_t>(chw ? (c * 160 + y) * 192 + x : (y * 192 + x) * 3 + c);
            want[at] = (r.at(y, x, c) / 255.0 - kImagenetMean[static_cast<size_t>(c)]) /
                       kImagenetStddev[static_cast<size_t>(c)];
          }
        }
      }
      const double rel = dtype == DType::kFloat32 ? 0 : dtype == DType::kFloat16 ? 0x1p-11 : 0x1p-8;
      const std::vector<double> got = Values(t);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_LE(std::abs(got[i] - want[i]), 1e-5 + rel * std::abs(want[i]))
            << DTypeName(dtype) << (chw ? " CHW" : " HWC") << " value " << i;
      }
    }
  }
}

// From the JPEG: the crop decoded at the DCT scale, against a TurboJPEG
// decode of the whole image at that scale and the reference resize of the
// scaled window. Region decoding (jpeg_crop_scanline, jpeg_skip_scanlines)
// gives the same pixels, so the bound is rounding again.
TEST_F(RandomResizedCropTest, JpegInputMatchesTheScaledReference) {
  // A 112x112 output makes crops of 224+ (448+) pixels decode at 4/8 (2/8).
  RandomResizedCrop rrc({.height = 112, .width = 112, .flip_probability = 0.5, .seed = 9});
  std::set<int> scales;
  for (const std::string& jpeg : jpegs()) {
    const JpegInfo info = *ReadJpegInfo(jpeg);
    for (uint32_t k = 0; k < 8; ++k) {
      const Example in = JpegExample(jpeg, 4, k);
      const ResizedCropPlan plan = rrc.Plan(in, info.height, info.width);
      const CropWindow& w = plan.window;
      int m = 1;
      while (m < 8 && (w.height * m < 8 * 112 || w.width * m < 8 * 112)) m *= 2;
      scales.insert(m);
      absl::StatusOr<Example> out = rrc(in);
      ASSERT_TRUE(out.ok()) << out.status();
      const double s = m / 8.0;
      RefImage want = RefResize(ToRef(ScaledDecode(jpeg, m)), static_cast<double>(w.y) * s,
                                static_cast<double>(w.x) * s, static_cast<double>(w.height) * s,
                                static_cast<double>(w.width) * s, 112, 112, plan.flip);
      for (double& v : want.values) v = std::floor(v + 0.5);
      EXPECT_LE(Compare(Values(out->components[0]), want.values).max, 1.0) << "scale " << m << "/8";
    }
  }
  EXPECT_TRUE(scales.count(8) && scales.count(4)) << "full-scale and reduced decodes checked";
}

// The DCT-scaled decode against the full-resolution image shrunk by area
// averaging (antialiased; plain bilinear from full resolution aliases at these
// 2-4x shrinks and is no reference): not the same filter (the IDCT drops
// high frequencies, area averaging attenuates them), but close. Mean error
// bound 3 levels of 255 (measured 0.9-2.4 on these photographs, the most on
// the most detailed one); single pixels at sharp edges differ more.
TEST_F(RandomResizedCropTest, DctScalingStaysCloseToFullResolution) {
  RandomResizedCrop rrc({.height = 112, .width = 112, .seed = 13});
  int scaled = 0;
  for (const std::string& jpeg : jpegs()) {
    const Tensor full = *DecodeJpeg(jpeg);
    const RefImage ref = ToRef(full);
    for (uint32_t k = 0; k < 4; ++k) {
      const Example in = JpegExample(jpeg, 8, k);
      const ResizedCropPlan plan = rrc.Plan(in, full.dim(0), full.dim(1));
      const CropWindow& w = plan.window;
      if (w.height < 224 || w.width < 224) continue;  // full-scale decode: checked above
      ++scaled;
      absl::StatusOr<Example> out = rrc(in);
      ASSERT_TRUE(out.ok()) << out.status();
      const RefImage want = testing::RefResizeArea(
          ref, static_cast<double>(w.y), static_cast<double>(w.x), static_cast<double>(w.height),
          static_cast<double>(w.width), 112, 112);
      const Diff d = Compare(Values(out->components[0]), want.values);
      EXPECT_LT(d.mean, 3.0) << "window " << w.height << "x" << w.width;
    }
  }
  EXPECT_GT(scaled, 4);
}

TEST_F(RandomResizedCropTest, SameWindowFromPixelsAndJpegAndSeededPerItem) {
  RandomResizedCrop rrc({.flip_probability = 0.5, .seed = 21});
  const std::string& jpeg = jpegs()[0];
  const Tensor image = *DecodeJpeg(jpeg);
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> windows;
  for (uint32_t k = 0; k < 20; ++k) {
    const ResizedCropPlan a = rrc.Plan(ImageExample(image, 5, k), image.dim(0), image.dim(1));
    const ResizedCropPlan b = rrc.Plan(JpegExample(jpeg, 5, k), image.dim(0), image.dim(1));
    EXPECT_EQ(a.window.y, b.window.y);
    EXPECT_EQ(a.window.x, b.window.x);
    EXPECT_EQ(a.window.height, b.window.height);
    EXPECT_EQ(a.flip, b.flip);
    windows.insert({a.window.y, a.window.x, a.window.height, a.window.width});
    // Inside the image, with area and ratio in range (up to rounding).
    const CropWindow& w = a.window;
    EXPECT_GE(w.y, 0);
    EXPECT_GE(w.x, 0);
    EXPECT_LE(w.y + w.height, image.dim(0));
    EXPECT_LE(w.x + w.width, image.dim(1));
    const double area =
        static_cast<double>(w.height * w.width) / static_cast<double>(image.dim(0) * image.dim(1));
    EXPECT_GE(area, 0.07);
    EXPECT_LE(area, 1.0);
    const double ratio = static_cast<double>(w.width) / static_cast<double>(w.height);
    EXPECT_GE(ratio, 0.74);
    EXPECT_LE(ratio, 1.35);
  }
  EXPECT_GT(windows.size(), 15u);  // echoed copies get their own crops
  // Same seed and indices: the same bytes, run after run; another seed differs.
  const Example in = JpegExample(jpeg, 6, 2);
  absl::StatusOr<Example> a = rrc(in), b = rrc(in);
  absl::StatusOr<Example> c = RandomResizedCrop({.flip_probability = 0.5, .seed = 22})(in);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->components[0].buffer().view(), b->components[0].buffer().view());
  EXPECT_NE(a->components[0].buffer().view(), c->components[0].buffer().view());
}

// An output whose buffer cannot exist: Validate() checks height x width (one
// channel at least) against the cap, each call its channels too, before the
// buffer is allocated.
TEST(RandomResizedCropSizeTest, OutputBeyondTheMemoryCapIsResourceExhausted) {
  // The largest output side, float32: 16 GiB with one channel.
  const RandomResizedCrop largest({.height = 65536, .width = 65536, .dtype = DType::kFloat32});
  const absl::Status s = largest.Validate();
  if (int64_t{65536} * 65536 * 4 > DefaultMemoryCap()) {
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_NE(std::string(s.message())
                  .find("RandomResizedCrop: output [height, width] = [65536, 65536] needs at "
                        "least 16.0 GiB (4 bytes each), above the memory cap of"),
              std::string::npos)
        << s;
    EXPECT_NE(std::string(s.message()).find("RandomResizedCropOptions::max_bytes = 0"),
              std::string::npos)
        << s;
  } else {
    EXPECT_TRUE(s.ok()) << s;
  }
  // With max_bytes: 512 x 512 float32 = 1 MiB fits with one channel...
  const RandomResizedCrop capped(
      {.height = 512, .width = 512, .dtype = DType::kFloat32, .max_bytes = 1 << 20});
  EXPECT_TRUE(capped.Validate().ok()) << capped.Validate();
  const Tensor gray = *Tensor::Make(DType::kUInt8, {64, 64}, Buffer::CopyOf(std::string(4096, 9)));
  absl::StatusOr<Example> one = capped(ImageExample(gray, 1));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->components[0].shape(), (Shape{512, 512, 1}));
  // ... not with three, refused before the buffer is taken.
  const Tensor rgb =
      *Tensor::Make(DType::kUInt8, {64, 64, 3}, Buffer::CopyOf(std::string(64 * 64 * 3, 9)));
  absl::StatusOr<Example> three = capped(ImageExample(rgb, 2));
  EXPECT_EQ(three.status().code(), absl::StatusCode::kResourceExhausted) << three.status();
  EXPECT_NE(std::string(three.status().message())
                .find("output [height, width, channels] = [512, 512, 3] needs at least 3.0 MiB"),
            std::string::npos)
      << three.status();
  const RandomResizedCrop over(
      {.height = 513, .width = 512, .dtype = DType::kFloat32, .max_bytes = 1 << 20});
  EXPECT_EQ(over.Validate().code(), absl::StatusCode::kResourceExhausted);
  const RandomResizedCrop negative({.max_bytes = -1});
  EXPECT_EQ(negative.Validate().code(), absl::StatusCode::kInvalidArgument);
}

// A large output's block comes back to the augmenter (and its copies) when
// the last view of it goes, and the next output of that size reuses it; an
// output still held is never reused; small outputs are allocated each time;
// an output outlives the augmenter.
TEST(RandomResizedCropPoolTest, LargeOutputsReuseReleasedBlocks) {
  const Tensor rgb =
      *Tensor::Make(DType::kUInt8, {64, 64, 3}, Buffer::CopyOf(std::string(64 * 64 * 3, 9)));
  std::optional<RandomResizedCrop> crop;
  crop.emplace(RandomResizedCropOptions{.dtype = DType::kFloat32, .seed = 3});
  ASSERT_GE(size_t{224} * 224 * 3 * 4, RandomResizedCrop::kPooledOutputBytes);
  absl::StatusOr<Example> first = (*crop)(ImageExample(rgb, 1));
  ASSERT_TRUE(first.ok()) << first.status();
  const uint8_t* block = first->components[0].buffer().data();
  // Held: the next output has a block of its own, with its own values.
  std::optional<RandomResizedCrop> copy(*crop);
  absl::StatusOr<Example> second = (*copy)(ImageExample(rgb, 2));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(second->components[0].buffer().data(), block);
  const std::string first_bytes(first->components[0].buffer().view());
  // Released: a copy of the augmenter takes the same block for its next output.
  first = Example();
  absl::StatusOr<Example> third = (*copy)(ImageExample(rgb, 1));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->components[0].buffer().data(), block);
  EXPECT_EQ(third->components[0].buffer().view(), first_bytes);  // same item, same output
  // Small outputs are not pooled.
  const RandomResizedCrop small({.height = 16, .width = 16, .seed = 3});
  absl::StatusOr<Example> a = small(ImageExample(rgb, 1));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_LT(a->components[0].byte_size(), RandomResizedCrop::kPooledOutputBytes);
  // Outputs outlive the augmenters; their blocks are freed then.
  crop.reset();
  copy.reset();
  const std::string third_bytes(third->components[0].buffer().view());
  EXPECT_EQ(third_bytes, first_bytes);
}

}  // namespace
}  // namespace dataecho
