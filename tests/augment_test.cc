// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/augment.h"

#include <cstring>
#include <set>
#include <string>

#include "dataecho/float16.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

// An image whose pixel (y, x, c) holds a distinct value.
Example MakeImage(int64_t h, int64_t w, int64_t c, uint64_t source_index,
                  uint32_t repeat_index = 0) {
  MutableBuffer mb(static_cast<size_t>(h * w * c));
  for (int64_t i = 0; i < h * w * c; ++i) mb.data()[i] = static_cast<uint8_t>(1 + i % 250);
  Example e;
  e.components.push_back(*Tensor::Make(DType::kUInt8, {h, w, c}, std::move(mb).Freeze()));
  e.label = 3;
  e.source_index = source_index;
  e.repeat_index = repeat_index;
  return e;
}

std::string Bytes(const Example& e) { return std::string(e.components[0].buffer().view()); }

TEST(AugmentRngTest, DeterministicAndDistinctPerRepeat) {
  AugmentRng a(1, 10, 0), b(1, 10, 0), c(1, 10, 1), d(1, 11, 0), e(2, 10, 0);
  const uint64_t va = a.Next();
  EXPECT_EQ(va, b.Next());
  EXPECT_NE(va, c.Next());
  EXPECT_NE(va, d.Next());
  EXPECT_NE(va, e.Next());
  AugmentRng u(5, 5, 5);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_LT(u.Uniform(7), 7u);
    const double x = u.UniformDouble();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
}

TEST(RandomCropTest, DeterministicAndRepeatsDiffer) {
  RandomCrop crop({.height = 24, .width = 24, .padding = 4, .seed = 9});
  const Example in = MakeImage(28, 28, 1, 17);
  const std::string original = Bytes(in);
  auto a = crop(in), b = crop(in);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(Bytes(*a), Bytes(*b));  // same (seed, source_index, repeat_index)
  EXPECT_EQ(a->components[0].shape(), Shape({24, 24, 1}));
  EXPECT_EQ(a->label, 3);
  EXPECT_EQ(Bytes(in), original);  // input untouched
  EXPECT_FALSE(a->components[0].buffer().SharesStorageWith(in.components[0].buffer()));
  // Echoed copies of one item get different crops (some pair among 8 must differ;
  // 4 of 40^2 placements could coincide by chance, 8 distinct values cannot all).
  std::set<std::string> crops;
  for (uint32_t k = 0; k < 8; ++k) crops.insert(Bytes(*crop(MakeImage(28, 28, 1, 17, k))));
  EXPECT_GE(crops.size(), 6u);
  // Another seed gives another crop.
  std::set<std::string> seeds;
  for (uint32_t s = 0; s < 8; ++s)
    seeds.insert(Bytes(*RandomCrop({.height = 24, .width = 24, .padding = 4, .seed = s})(in)));
  EXPECT_GE(seeds.size(), 6u);
}

TEST(RandomCropTest, WindowContentIsAShiftedCopyWithZeroPadding) {
  // 1 channel 4x4 with padding 2, crop 4x4: result must equal the padded image at some offset.
  const Example in = MakeImage(4, 4, 1, 0);
  const uint8_t* src = in.components[0].buffer().data();
  for (uint32_t rep = 0; rep < 20; ++rep) {
    Example e = in;
    e.repeat_index = rep;
    auto out = RandomCrop({.height = 4, .width = 4, .padding = 2, .seed = 1})(e);
    ASSERT_TRUE(out.ok());
    const uint8_t* dst = out->components[0].buffer().data();
    bool found = false;
    for (int oy = -2; oy <= 2 && !found; ++oy) {
      for (int ox = -2; ox <= 2 && !found; ++ox) {
        bool match = true;
        for (int y = 0; y < 4; ++y)
          for (int x = 0; x < 4; ++x) {
            const int sy = oy + y, sx = ox + x;
            const uint8_t want = (sy < 0 || sy >= 4 || sx < 0 || sx >= 4) ? 0 : src[sy * 4 + sx];
            match = match && dst[y * 4 + x] == want;
          }
        found = match;
      }
    }
    EXPECT_TRUE(found) << "repeat " << rep;
  }
}

TEST(RandomCropTest, RejectsWindowsThatDoNotFit) {
  EXPECT_EQ(RandomCrop({.height = 40, .width = 28, .padding = 4})(MakeImage(28, 28, 1, 0))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RandomCrop({.height = 0, .width = 28})(MakeImage(28, 28, 1, 0)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      RandomCrop({.height = 2, .width = 2, .component = 1})(MakeImage(4, 4, 1, 0)).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(RandomFlipTest, FlipsMirrorRowsAndRepeatsDiffer) {
  const Example in = MakeImage(3, 5, 3, 4);
  int flipped = 0, same = 0;
  for (uint32_t k = 0; k < 64; ++k) {
    Example e = in;
    e.repeat_index = k;
    auto out = RandomFlip({.seed = 3})(e);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(Bytes(*RandomFlip({.seed = 3})(e)), Bytes(*out));  // deterministic
    if (Bytes(*out) == Bytes(in)) {
      ++same;
      continue;
    }
    ++flipped;
    const uint8_t* s = in.components[0].buffer().data();
    const uint8_t* d = out->components[0].buffer().data();
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 5; ++x)
        for (int c = 0; c < 3; ++c) ASSERT_EQ(d[(y * 5 + x) * 3 + c], s[(y * 5 + (4 - x)) * 3 + c]);
  }
  EXPECT_GT(flipped, 10);  // p = 0.5 over 64 draws
  EXPECT_GT(same, 10);
  EXPECT_EQ(Bytes(*RandomFlip({.probability = 0.0})(in)), Bytes(in));
  auto always = RandomFlip({.probability = 1.0})(in);
  EXPECT_NE(Bytes(*always), Bytes(in));
}

TEST(NormalizeTest, PerChannelMeanStdAndDtypes) {
  Example e = MakeImage(1, 2, 3, 0);  // values 1..6
  auto f = Normalize({.mean = {1.0f, 2.0f, 3.0f}, .stddev = {1.0f, 2.0f, 4.0f}, .scale = 1.0f})(e);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->components[0].dtype(), DType::kFloat32);
  auto v = f->components[0].data<float>();
  EXPECT_FLOAT_EQ(v[0], 0.0f);   // (1-1)/1
  EXPECT_FLOAT_EQ(v[1], 0.0f);   // (2-2)/2
  EXPECT_FLOAT_EQ(v[2], 0.0f);   // (3-3)/4
  EXPECT_FLOAT_EQ(v[3], 3.0f);   // (4-1)/1
  EXPECT_FLOAT_EQ(v[4], 1.5f);   // (5-2)/2
  EXPECT_FLOAT_EQ(v[5], 0.75f);  // (6-3)/4
  auto h = Normalize({.mean = {0.0f}, .stddev = {0.5f}, .dtype = DType::kFloat16})(e);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->components[0].dtype(), DType::kFloat16);
  EXPECT_EQ(h->components[0].data<uint16_t>()[0], FloatToHalf(1.0f / 255.0f / 0.5f));
  auto b = Normalize({.dtype = DType::kBFloat16})(e);
  EXPECT_EQ(b->components[0].data<uint16_t>()[5], FloatToBFloat16(6.0f / 255.0f));
  EXPECT_EQ(Normalize({.mean = {0, 0}, .stddev = {1}})(e).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Normalize({.stddev = {0}})(e).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Normalize({.dtype = DType::kInt32})(e).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CastTest, ConvertsBetweenFloatTypes) {
  Example e = MakeImage(2, 2, 1, 0);
  auto f = Cast({.dtype = DType::kFloat32})(e);
  ASSERT_TRUE(f.ok());
  EXPECT_FLOAT_EQ(f->components[0].data<float>()[3], 4.0f);
  auto h = Cast({.dtype = DType::kFloat16, .scale = 0.5f})(*f);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->components[0].data<uint16_t>()[3], FloatToHalf(2.0f));
  auto b = Cast({.dtype = DType::kBFloat16})(*h);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->components[0].data<uint16_t>()[3], FloatToBFloat16(2.0f));
  EXPECT_EQ(Cast({.dtype = DType::kUInt8})(e).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dataecho
