// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/jpeg.h"

// jpeglib.h needs <cstdio> (FILE) first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <turbojpeg.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/formats/image_record.h"
#include "gtest/gtest.h"
#include "support/image_reference.h"

namespace dataecho {
namespace {

Tensor Gradient(int64_t h, int64_t w, int64_t c) {
  return testing::ImageOf(h, w, c, [](int64_t y, int64_t x, int64_t k) {
    return static_cast<uint8_t>((x * 8 + y * 3 + k * 40) & 0xff);
  });
}

double MeanAbsDiff(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (size_t i = 0; i < a.byte_size(); ++i)
    d += std::abs(int{a.buffer().data()[i]} - int{b.buffer().data()[i]});
  return d / static_cast<double>(a.byte_size());
}

TEST(JpegTest, RoundTripGrayAndRgb) {
  for (int64_t c : {1, 3}) {
    Tensor img = Gradient(28, 32, c);
    auto jpeg = EncodeJpeg(img, {.quality = 95, .subsample_chroma = false});
    ASSERT_TRUE(jpeg.ok()) << jpeg.status();
    EXPECT_EQ(static_cast<uint8_t>((*jpeg)[0]), 0xff);
    EXPECT_EQ(static_cast<uint8_t>((*jpeg)[1]), 0xd8);
    auto back = DecodeJpeg(*jpeg);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dtype(), DType::kUInt8);
    EXPECT_EQ(back->shape(), Shape({28, 32, c}));
    EXPECT_LT(MeanAbsDiff(img, *back), 3.0) << "channels " << c;
  }
}

TEST(JpegTest, ForcedChannels) {
  auto jpeg = EncodeJpeg(Gradient(16, 16, 1));
  ASSERT_TRUE(jpeg.ok());
  auto rgb = DecodeJpeg(*jpeg, {.channels = 3});
  ASSERT_TRUE(rgb.ok()) << rgb.status();
  EXPECT_EQ(rgb->shape(), Shape({16, 16, 3}));
  EXPECT_EQ(DecodeJpeg(*jpeg, {.channels = 2}).status().code(), absl::StatusCode::kInvalidArgument);
}

// Inverted (Adobe) CMYK pixels of an RGB image: C = R, M = G, Y = B, K = k.
// They show as RGB (C * k / 255, ...).
std::vector<uint8_t> CmykOf(const Tensor& rgb, uint8_t k) {
  const size_t pixels = rgb.byte_size() / 3;
  std::vector<uint8_t> cmyk(pixels * 4);
  for (size_t p = 0; p < pixels; ++p) {
    for (size_t c = 0; c < 3; ++c) cmyk[4 * p + c] = rgb.buffer().data()[3 * p + c];
    cmyk[4 * p + 3] = k;
  }
  return cmyk;
}

// A YCCK JPEG: what TurboJPEG makes of CMYK pixels.
std::string YcckJpeg(std::vector<uint8_t> cmyk, int height, int width) {
  tjhandle h = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(h, cmyk.data(), width, width * 4, height, TJPF_CMYK, &out, &size,
                             TJSAMP_444, 95, TJFLAG_ACCURATEDCT);
  EXPECT_EQ(rc, 0) << tjGetErrorStr2(h);
  std::string jpeg(reinterpret_cast<const char*>(out), size);
  tjFree(out);
  tjDestroy(h);
  return jpeg;
}

// A plain CMYK JPEG (libjpeg's JCS_CMYK, with an Adobe marker).
std::string CmykJpeg(std::vector<uint8_t> cmyk, int height, int width) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, JCS_CMYK);
  jpeg_set_quality(&c, 95, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = cmyk.data() + static_cast<size_t>(c.next_scanline) * width * 4;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string jpeg(reinterpret_cast<const char*>(out), size);
  free(out);  // NOLINT: jpeg_mem_dest allocates with malloc
  return jpeg;
}

// TurboJPEG's TJCS_ colorspace of a JPEG's header.
int ColorspaceOf(const std::string& jpeg) {
  tjhandle h = tjInitDecompress();
  int width = 0, height = 0, subsamp = 0, colorspace = -1;
  tjDecompressHeader3(h, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), &width,
                      &height, &subsamp, &colorspace);
  tjDestroy(h);
  return colorspace;
}

// DecodeJpeg used to call these valid images corrupt (DATA_LOSS) while
// DecodeJpegCrop decoded them: both now give the same RGB.
TEST(JpegTest, CmykAndYcckJpegsDecodeToRgbAsTheCropDecoderDoes) {
  const Tensor rgb = Gradient(28, 32, 3);
  for (const uint8_t k : {uint8_t{255}, uint8_t{200}}) {
    MutableBuffer shown(rgb.byte_size());
    for (size_t i = 0; i < rgb.byte_size(); ++i)
      shown.data()[i] = static_cast<uint8_t>((rgb.buffer().data()[i] * k + 127) / 255);
    const Tensor expected = *Tensor::Make(DType::kUInt8, {28, 32, 3}, std::move(shown).Freeze());
    const std::pair<int, std::string> jpegs[] = {{TJCS_YCCK, YcckJpeg(CmykOf(rgb, k), 28, 32)},
                                                 {TJCS_CMYK, CmykJpeg(CmykOf(rgb, k), 28, 32)}};
    for (const auto& [colorspace, jpeg] : jpegs) {
      SCOPED_TRACE(::testing::Message() << "TJCS " << colorspace << ", K " << int{k});
      ASSERT_EQ(ColorspaceOf(jpeg), colorspace);
      ASSERT_EQ(ReadJpegInfo(jpeg)->components, 4);
      for (int channels : {0, 3}) {
        absl::StatusOr<Tensor> image = DecodeJpeg(jpeg, {.channels = channels}, "x.tfrecord:7");
        ASSERT_TRUE(image.ok()) << image.status();
        ASSERT_EQ(image->shape(), Shape({28, 32, 3}));
        EXPECT_LT(MeanAbsDiff(expected, *image), 3.0);
        absl::StatusOr<JpegCrop> crop = DecodeJpegCrop(jpeg, {.height = 28, .width = 32});
        ASSERT_TRUE(crop.ok()) << crop.status();
        EXPECT_LT(MeanAbsDiff(crop->pixels, *image), 1.0);
      }
      // One channel from CMYK is refused clearly, as by the crop decoder.
      absl::Status gray = DecodeJpeg(jpeg, {.channels = 1}, "x.tfrecord:7").status();
      EXPECT_EQ(gray.code(), absl::StatusCode::kInvalidArgument) << gray;
      EXPECT_NE(gray.message().find("CMYK JPEG in x.tfrecord:7"), std::string::npos) << gray;
    }
  }
}

TEST(JpegTest, CorruptAndTruncatedAreDataLossNamingTheRecord) {
  auto jpeg = EncodeJpeg(Gradient(64, 64, 3));
  ASSERT_TRUE(jpeg.ok());
  // Truncated: every prefix fails cleanly with DATA_LOSS.
  for (size_t len : {size_t{0}, size_t{2}, size_t{20}, jpeg->size() / 2, jpeg->size() - 2}) {
    auto r = DecodeJpeg(std::string_view(*jpeg).substr(0, len), {}, "file.tfrecord:1234");
    ASSERT_FALSE(r.ok()) << len;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << len;
    EXPECT_NE(r.status().message().find("file.tfrecord:1234"), std::string::npos) << r.status();
  }
  // Not a JPEG at all.
  EXPECT_EQ(DecodeJpeg("this is not a jpeg").status().code(), absl::StatusCode::kDataLoss);
  // Garbage in the entropy-coded data.
  std::string bad = *jpeg;
  for (size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i) bad[i] = static_cast<char>(0xff);
  EXPECT_EQ(DecodeJpeg(bad, {}, "x:0").status().code(), absl::StatusCode::kDataLoss);
}

TEST(JpegTest, TooManyPixelsRejectedBeforeDecoding) {
  auto jpeg = EncodeJpeg(Gradient(64, 64, 1));
  ASSERT_TRUE(jpeg.ok());
  EXPECT_EQ(DecodeJpeg(*jpeg, {.max_pixels = 64 * 63}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(DecodeJpeg(*jpeg, {.max_pixels = 64 * 64}).ok());
}

TEST(JpegTest, EncodeRejectsWrongTypes) {
  auto f = Tensor::Make(DType::kFloat32, {2, 2, 1}, Buffer::CopyOf(std::string(16, '\0')));
  EXPECT_EQ(EncodeJpeg(*f).status().code(), absl::StatusCode::kInvalidArgument);
  auto two = Tensor::Make(DType::kUInt8, {2, 2, 2}, Buffer::CopyOf(std::string(8, '\0')));
  EXPECT_EQ(EncodeJpeg(*two).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(Gradient(4, 4, 1), {.quality = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ImageRecordTest, RawRoundTripSharesRecordBytes) {
  Tensor img = Gradient(28, 28, 1);
  auto payload = EncodeImageRecord(img, 7);
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(payload->size(), kImageRecordHeaderBytes + 784);
  EXPECT_EQ(payload->substr(0, 4), "DEIR");
  Record r;
  r.data = Buffer::CopyOf(*payload);
  r.source = std::make_shared<const std::string>("shard-0");
  r.offset = 100;
  r.source_index = 42;
  r.repeat_index = 3;
  auto ex = DecodeImageRecord(r);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_EQ(ex->label, 7);
  EXPECT_EQ(ex->source_index, 42u);
  EXPECT_EQ(ex->repeat_index, 3u);
  ASSERT_EQ(ex->components.size(), 1u);
  EXPECT_EQ(ex->components[0].shape(), Shape({28, 28, 1}));
  EXPECT_EQ(ex->components[0].buffer().view(), img.buffer().view());
  EXPECT_TRUE(ex->components[0].buffer().SharesStorageWith(r.data));
}

TEST(ImageRecordTest, JpegRoundTrip) {
  Tensor img = Gradient(28, 28, 3);
  auto payload = EncodeImageRecord(img, -5, {.encoding = ImageEncoding::kJpeg, .jpeg_quality = 98});
  ASSERT_TRUE(payload.ok());
  auto ex = DecodeImageRecordPayload(*payload);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_EQ(ex->label, -5);
  EXPECT_EQ(ex->components[0].shape(), Shape({28, 28, 3}));
  EXPECT_LT(MeanAbsDiff(img, ex->components[0]), 12.0);  // 4:2:0 chroma on a busy image
}

TEST(ImageRecordTest, MalformedPayloadsAreDataLoss) {
  auto raw = EncodeImageRecord(Gradient(4, 4, 1), 1);
  ASSERT_TRUE(raw.ok());
  Record r;
  r.source = std::make_shared<const std::string>("s.tfrecord");
  r.offset = 77;
  for (std::string bad : {std::string("short"), "XXXX" + raw->substr(4),
                          raw->substr(0, raw->size() - 1), *raw + "x"}) {
    r.data = Buffer::CopyOf(bad);
    auto ex = DecodeImageRecord(r);
    ASSERT_EQ(ex.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(ex.status().message().find("s.tfrecord:77"), std::string::npos) << ex.status();
  }
  std::string version = *raw;
  version[4] = 9;
  EXPECT_EQ(DecodeImageRecordPayload(version).status().code(), absl::StatusCode::kDataLoss);
  auto jpeg = EncodeImageRecord(Gradient(8, 8, 1), 1, {.encoding = ImageEncoding::kJpeg});
  ASSERT_TRUE(jpeg.ok());
  r.data = Buffer::CopyOf(jpeg->substr(0, jpeg->size() - 10));
  auto ex = DecodeImageRecord(r);
  EXPECT_EQ(ex.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(ex.status().message().find("s.tfrecord:77"), std::string::npos) << ex.status();
  std::string lying = *jpeg;
  lying[16] = 9;  // header height 9, JPEG is 8
  EXPECT_EQ(DecodeImageRecordPayload(lying).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace dataecho
