// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The ImageNet augmentation per image: full JPEG decode, and RandomResizedCrop
// to 224x224 from the JPEG (region decode at a DCT scale) or from decoded
// pixels, on the ImageNet-like set's images (testing/imagenet_like.h).
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/random_resized_crop.h"
#include "testing/imagenet_like.h"

namespace dataecho {
namespace {

// 16 images of the set (seed 1), as JPEGs (quality 90) and decoded.
struct Images {
  std::vector<Example> jpegs, pixels;
};
const Images& TestImages() {
  static const Images* images = [] {
    auto* im = new Images;
    const std::vector<Tensor> photos = *testing::LoadPhotos();
    for (int64_t i = 0; i < 16; ++i) {
      const testing::LabelledImage li = *testing::MakeImagenetLikeImage(photos, {}, i);
      const std::string jpeg = *EncodeJpeg(li.image, {.quality = 90});
      Example e;
      e.source_index = static_cast<uint64_t>(i);
      e.components.push_back(
          *Tensor::Make(DType::kUInt8, {static_cast<int64_t>(jpeg.size())}, Buffer::CopyOf(jpeg)));
      im->jpegs.push_back(e);
      e.components[0] = *DecodeJpeg(jpeg);
      im->pixels.push_back(e);
    }
    return im;
  }();
  return *images;
}

void BM_JpegDecodeFull(benchmark::State& state) {
  const Images& im = TestImages();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        DecodeJpeg(im.jpegs[i++ % im.jpegs.size()].components[0].buffer().view()));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_JpegDecodeFull);

// RandomResizedCrop(224) + flip + ImageNet normalize, float32 [3, 224, 224].
void BM_RandomResizedCrop(benchmark::State& state, bool from_jpeg, RandomResizedCropOptions o) {
  const Images& im = TestImages();
  const std::vector<Example>& in = from_jpeg ? im.jpegs : im.pixels;
  o.flip_probability = 0.5;
  o.mean = kImagenetMean;
  o.stddev = kImagenetStddev;
  const RandomResizedCrop rrc(o);
  uint32_t k = 0;
  for (auto _ : state) {
    Example e = in[k % in.size()];
    e.repeat_index = k++;
    absl::StatusOr<Example> out = rrc(std::move(e));
    if (!out.ok()) state.SkipWithError(out.status().ToString().c_str());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_RandomResizedCrop, jpeg_f32_chw, true,
                  {.dtype = DType::kFloat32, .channels_first = true});
BENCHMARK_CAPTURE(BM_RandomResizedCrop, jpeg_f16_hwc, true, {.dtype = DType::kFloat16});
BENCHMARK_CAPTURE(BM_RandomResizedCrop, jpeg_f32_chw_fast, true,
                  {.dtype = DType::kFloat32,
                   .channels_first = true,
                   .jpeg = {.fast_idct = true, .fast_upsample = true}});
BENCHMARK_CAPTURE(BM_RandomResizedCrop, jpeg_f32_chw_no_dct_scaling, true,
                  {.dtype = DType::kFloat32, .channels_first = true, .dct_scaling = false});
BENCHMARK_CAPTURE(BM_RandomResizedCrop, pixels_f32_chw, false,
                  {.dtype = DType::kFloat32, .channels_first = true});
BENCHMARK_CAPTURE(BM_RandomResizedCrop, pixels_f16_hwc, false, {.dtype = DType::kFloat16});
BENCHMARK_CAPTURE(BM_RandomResizedCrop, pixels_u8_hwc, false, {.dtype = DType::kUInt8});

}  // namespace
}  // namespace dataecho
