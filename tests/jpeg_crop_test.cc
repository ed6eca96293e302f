// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// DecodeJpegCrop, EncodedImageRecord and RandomResizedCrop on odd inputs:
// tiny and extreme shapes, grayscale and CMYK JPEGs, corrupt streams, bad
// options; and a decode-bound pipeline destroyed mid-flight.
#include <turbojpeg.h>

#include <cmath>
#include <string>

#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/random_resized_crop.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/image_reference.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

Tensor Pattern(int64_t h, int64_t w, int64_t c) {
  return testing::ImageOf(h, w, c, [](int64_t y, int64_t x, int64_t k) {
    return static_cast<uint8_t>(128 +
                                100 * std::sin(0.05 * static_cast<double>(x + 2 * y + 30 * k)));
  });
}

Example Bytes(const std::string& jpeg, uint64_t index = 0) {
  Example e;
  e.components.push_back(
      *Tensor::Make(DType::kUInt8, {static_cast<int64_t>(jpeg.size())}, Buffer::CopyOf(jpeg)));
  e.source_index = index;
  return e;
}

TEST(DecodeJpegCropTest, PicksTheSmallestCoveringScaleAndReportsWhere) {
  const std::string jpeg = *EncodeJpeg(Pattern(480, 640, 3), {.quality = 90});
  // 400x460 window to >= 100x224: 4/8 (200x230; 2/8 gives 100x115).
  absl::StatusOr<JpegCrop> c = DecodeJpegCrop(jpeg, {.y = 41, .x = 99, .height = 400, .width = 460},
                                              {.min_height = 100, .min_width = 224});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scale_num, 4);
  EXPECT_EQ(c->scaled_height, 240);
  EXPECT_EQ(c->scaled_width, 320);
  EXPECT_EQ(c->y0, 41 * 4 / 8);
  EXPECT_EQ(c->x0, 99 * 4 / 8);
  EXPECT_EQ(c->pixels.shape(),
            Shape({(441 * 4 + 7) / 8 - 41 * 4 / 8, (559 * 4 + 7) / 8 - 99 * 4 / 8, 3}));
  // To >= 100x100: 2/8 (100x115); 5/8 etc. are never used.
  c = DecodeJpegCrop(jpeg, {.height = 400, .width = 460}, {.min_height = 100, .min_width = 100});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scale_num, 2);
  c = DecodeJpegCrop(jpeg, {.height = 400, .width = 460}, {.min_height = 201, .min_width = 100});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scale_num, 8);
  // Full scale without a minimum: exactly the window, equal to a full decode's pixels.
  c = DecodeJpegCrop(jpeg, {.y = 10, .x = 20, .height = 30, .width = 50});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scale_num, 8);
  ASSERT_EQ(c->pixels.shape(), Shape({30, 50, 3}));
  const Tensor full = *DecodeJpeg(jpeg);
  for (int64_t y = 0; y < 30; ++y) {
    ASSERT_EQ(
        std::string_view(reinterpret_cast<const char*>(c->pixels.buffer().data()) + y * 150, 150),
        full.buffer().view().substr(static_cast<size_t>(((y + 10) * 640 + 20) * 3), 150))
        << "row " << y;
  }
  // A window partly outside is clipped; one entirely outside is INVALID_ARGUMENT.
  c = DecodeJpegCrop(jpeg, {.y = 470, .x = 630, .height = 100, .width = 100});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pixels.shape(), Shape({10, 10, 3}));
  EXPECT_EQ(DecodeJpegCrop(jpeg, {.y = 480, .x = 0, .height = 5, .width = 5}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeJpegCrop(jpeg, {.y = 0, .x = 0, .height = 5, .width = 5}, {.channels = 2})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeJpegCrop(jpeg, {.height = 5, .width = 5}, {.max_pixels = 1000}).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(DecodeJpegCropTest, CorruptAndTruncatedAreDataLossNamingTheContext) {
  const std::string jpeg = *EncodeJpeg(Pattern(64, 64, 3));
  for (size_t len : {size_t{0}, size_t{2}, size_t{20}, jpeg.size() / 2, jpeg.size() - 2}) {
    absl::StatusOr<JpegCrop> c =
        DecodeJpegCrop(std::string_view(jpeg).substr(0, len), {.height = 64, .width = 64}, {},
                       "shard.tfrecord:99");
    ASSERT_FALSE(c.ok()) << len;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss) << len;
    EXPECT_NE(c.status().message().find("shard.tfrecord:99"), std::string::npos) << c.status();
  }
  // The thread's decompressor is reusable after an error.
  EXPECT_TRUE(DecodeJpegCrop(jpeg, {.height = 8, .width = 8}).ok());
  // Through RandomResizedCrop the error names the example.
  absl::StatusOr<Example> e = RandomResizedCrop(RandomResizedCropOptions{})(
      Bytes(std::string(jpeg).substr(0, jpeg.size() / 2), 77));
  EXPECT_EQ(e.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(e.status().message().find("example 77"), std::string::npos) << e.status();
}

// 1x1, 1xN and extreme aspect ratios: the crop falls back to the centred
// crop when no draw fits, and the output always has the requested size.
TEST(RandomResizedCropOddTest, TinyAndExtremeShapes) {
  RandomResizedCrop rrc({.height = 32, .width = 24, .flip_probability = 0.5, .seed = 1});
  for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {1, 7}, {1, 3000}, {3000, 2}, {2, 2500}}) {
    const Tensor img = Pattern(h, w, 3);
    Example in;
    in.components.push_back(img);
    absl::StatusOr<Example> pixels = rrc(in);
    ASSERT_TRUE(pixels.ok()) << h << "x" << w << ": " << pixels.status();
    EXPECT_EQ(pixels->components[0].shape(), Shape({32, 24, 3}));
    const ResizedCropPlan plan = rrc.Plan(in, h, w);
    EXPECT_GE(plan.window.height, 1);
    EXPECT_GE(plan.window.width, 1);
    EXPECT_LE(plan.window.y + plan.window.height, h);
    EXPECT_LE(plan.window.x + plan.window.width, w);
    absl::StatusOr<Example> jpeg = rrc(Bytes(*EncodeJpeg(img)));
    ASSERT_TRUE(jpeg.ok()) << h << "x" << w << ": " << jpeg.status();
    EXPECT_EQ(jpeg->components[0].shape(), Shape({32, 24, 3}));
  }
  // A 1x1 image resizes to its one colour.
  Example one;
  one.components.push_back(*Tensor::Make(DType::kUInt8, {1, 1, 3}, Buffer::CopyOf("\x10\x80\xf0")));
  absl::StatusOr<Example> out = rrc(one);
  ASSERT_TRUE(out.ok());
  const std::vector<double> v = testing::Values(out->components[0]);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], (i % 3 == 0 ? 16 : i % 3 == 1 ? 128 : 240));
}

TEST(RandomResizedCropOddTest, GrayscaleJpegGivesEqualChannelsOrOneChannel) {
  const Tensor gray = Pattern(90, 120, 1);
  const std::string jpeg = *EncodeJpeg(gray, {.quality = 95});
  EXPECT_EQ(ReadJpegInfo(jpeg)->components, 1);
  absl::StatusOr<Example> rgb =
      RandomResizedCrop({.height = 40, .width = 40, .seed = 2})(Bytes(jpeg));
  ASSERT_TRUE(rgb.ok()) << rgb.status();
  ASSERT_EQ(rgb->components[0].shape(), Shape({40, 40, 3}));
  const std::vector<double> v = testing::Values(rgb->components[0]);
  for (size_t i = 0; i < v.size(); i += 3) {
    ASSERT_EQ(v[i], v[i + 1]);
    ASSERT_EQ(v[i], v[i + 2]);
  }
  absl::StatusOr<Example> one = RandomResizedCrop(
      {.height = 40, .width = 40, .jpeg = {.channels = 1}, .seed = 2})(Bytes(jpeg));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->components[0].shape(), Shape({40, 40, 1}));
  const std::vector<double> g = testing::Values(one->components[0]);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], v[3 * i]);
  // Decoded [H, W] grayscale pixels work too.
  Example hw;
  hw.components.push_back(*Tensor::Make(DType::kUInt8, {90, 120}, gray.buffer()));
  absl::StatusOr<Example> out = RandomResizedCrop({.height = 40, .width = 40})(hw);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->components[0].shape(), Shape({40, 40, 1}));
}

// An Adobe-style CMYK JPEG (inverted: 255 = no ink) converts to RGB as
// R = C*K/255. Written by TurboJPEG from C = R, M = G, Y = B, K = 255, the
// decoded RGB is the original within JPEG's loss.
TEST(RandomResizedCropOddTest, CmykJpegConvertsToRgb) {
  const Tensor rgb = Pattern(64, 80, 3);
  std::vector<uint8_t> cmyk(64 * 80 * 4);
  for (size_t p = 0; p < 64 * 80; ++p) {
    for (size_t c = 0; c < 3; ++c) cmyk[4 * p + c] = rgb.buffer().data()[3 * p + c];
    cmyk[4 * p + 3] = 255;
  }
  tjhandle h = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(h, cmyk.data(), 80, 80 * 4, 64, TJPF_CMYK, &out, &size, TJSAMP_444, 95,
                        TJFLAG_ACCURATEDCT),
            0)
      << tjGetErrorStr2(h);
  const std::string jpeg(reinterpret_cast<const char*>(out), size);
  tjFree(out);
  tjDestroy(h);
  EXPECT_EQ(ReadJpegInfo(jpeg)->components, 4);
  absl::StatusOr<JpegCrop> c = DecodeJpegCrop(jpeg, {.height = 64, .width = 80});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->pixels.shape(), Shape({64, 80, 3}));
  double err = 0;
  for (size_t i = 0; i < c->pixels.byte_size(); ++i)
    err += std::abs(int{c->pixels.buffer().data()[i]} - int{rgb.buffer().data()[i]});
  EXPECT_LT(err / static_cast<double>(c->pixels.byte_size()), 3.0);
  EXPECT_TRUE(RandomResizedCrop({.height = 32, .width = 32})(Bytes(jpeg)).ok());
  // One channel from CMYK is refused clearly.
  absl::StatusOr<Example> gray =
      RandomResizedCrop({.height = 32, .width = 32, .jpeg = {.channels = 1}})(Bytes(jpeg, 5));
  EXPECT_EQ(gray.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(gray.status().message().find("CMYK"), std::string::npos) << gray.status();
}

TEST(RandomResizedCropOddTest, BadInputsAndOptionsAreInvalidArgument) {
  Example floats;
  floats.components.push_back(
      *Tensor::Make(DType::kFloat32, {4, 4, 3}, Buffer::CopyOf(std::string(192, '\0'))));
  EXPECT_EQ(RandomResizedCrop(RandomResizedCropOptions{})(floats).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RandomResizedCrop({.component = 1})(Bytes("x")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RandomResizedCrop(RandomResizedCropOptions{})(Bytes("not a jpeg")).status().code(),
            absl::StatusCode::kDataLoss);
  const std::vector<RandomResizedCropOptions> bad = {{.height = 0},
                                                     {.min_scale = 0},
                                                     {.min_scale = 0.5, .max_scale = 0.4},
                                                     {.max_scale = 1.5},
                                                     {.min_ratio = 0},
                                                     {.min_ratio = 2, .max_ratio = 1},
                                                     {.attempts = 0},
                                                     {.flip_probability = 1.5},
                                                     {.dtype = DType::kInt32},
                                                     {.dtype = DType::kFloat16, .stddev = {0.0f}},
                                                     {.jpeg = {.channels = 2}}};
  for (const RandomResizedCropOptions& o : bad) {
    EXPECT_EQ(RandomResizedCrop(o).Validate().code(), absl::StatusCode::kInvalidArgument);
  }
  // Three means for a one-channel image.
  Example gray;
  gray.components.push_back(Pattern(8, 8, 1));
  EXPECT_EQ(
      RandomResizedCrop({.dtype = DType::kFloat32, .mean = kImagenetMean, .stddev = {1.0f}})(gray)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(EncodedImageRecordTest, KeepsTheJpegAndSharesTheRecordBytes) {
  const Tensor img = Pattern(30, 40, 3);
  const std::string payload =
      *EncodeImageRecord(img, 321, {.encoding = ImageEncoding::kJpeg, .jpeg_quality = 90});
  Record r;
  r.data = Buffer::CopyOf(payload);
  r.source_index = 9;
  r.repeat_index = 2;
  absl::StatusOr<Example> e = EncodedImageRecord(r);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->label, 321);
  EXPECT_EQ(e->source_index, 9u);
  EXPECT_EQ(e->repeat_index, 2u);
  ASSERT_EQ(e->components[0].rank(), 1);
  EXPECT_EQ(e->components[0].buffer().view(),
            std::string_view(payload).substr(kImageRecordHeaderBytes));
  EXPECT_EQ(e->components[0].buffer().data(), r.data.data() + kImageRecordHeaderBytes);
  // Raw records give their pixels, as DecodeImageRecord.
  r.data = Buffer::CopyOf(*EncodeImageRecord(img, 1));
  e = EncodedImageRecord(r);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->components[0].shape(), Shape({30, 40, 3}));
  r.data = Buffer::CopyOf(std::string("DEIX") + std::string(40, '\0'));
  EXPECT_EQ(EncodedImageRecord(r).status().code(), absl::StatusCode::kDataLoss);
}

// Decode-bound: endless JPEG records, decoded and cropped on two threads;
// destroying the pipeline after a few elements returns (a hang fails through
// the test's timeout).
TEST(RandomResizedCropPipelineTest, DestroyedMidFlightReturns) {
  testing::TempDir dir;
  const std::string shard = dir.File("photos.tfrecord");
  {
    auto w = TFRecordWriter::Create(shard);
    ASSERT_TRUE(w.ok()) << w.status();
    for (const std::string& jpeg : testing::PhotoJpegs(2)) {
      const Tensor img = *DecodeJpeg(jpeg);
      ASSERT_TRUE((*w)->Write(*EncodeImageRecord(img, 1, {.encoding = ImageEncoding::kJpeg})).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  for (int round = 0; round < 5; ++round) {
    auto p = From(RepeatSource<Record>(
                      [store, shard] { return MakeTFRecordSource(store, {shard}); }, -1))
                 .Map([](Record r) { return EncodedImageRecord(r); }, {.parallelism = 0})
                 .Map(RandomResizedCrop({.dtype = DType::kFloat16, .seed = 1}),
                      {.parallelism = 2, .name = "decode_crop"})
                 .Prefetch({.depth = 8});
    for (int i = 0; i < round; ++i) {
      absl::StatusOr<std::optional<Example>> e = p.Next();
      ASSERT_TRUE(e.ok() && e->has_value()) << (e.ok() ? "end" : e.status().ToString());
      EXPECT_EQ((*e)->components[0].shape(), Shape({224, 224, 3}));
    }
  }
}

}  // namespace
}  // namespace dataecho
