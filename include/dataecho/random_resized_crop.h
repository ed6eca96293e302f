// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// random_resized_crop.h: the ImageNet training augmentation as one Map
// function: a random crop of random area and aspect ratio, resized to a fixed
// size (bilinear), optionally mirrored, normalized and cast, in one pass over
// the output; from decoded pixels or straight from the JPEG.
//
// The crop follows torchvision's RandomResizedCrop: up to `attempts` draws of
// an area fraction in [min_scale, max_scale] and an aspect ratio (width /
// height) log-uniform in [min_ratio, max_ratio]; the first that fits the
// image is placed uniformly; if none fits, the largest centred crop whose
// ratio is clamped to the range. Then a half-pixel-centre bilinear resize to
// height x width (see the note on antialiasing below).
//
// Input: component `component` of the Example is either
//   - a decoded image, uint8 [H, W, C] or [H, W] (C = 1..4): cropped and
//     resized, C channels out; or
//   - an encoded JPEG, a rank-1 uint8 tensor of its bytes (what
//     EncodedImageRecord gives for an image record): the window is drawn
//     from the JPEG's header and only that region is decoded
//     (DecodeJpegCrop), at the smallest DCT scale M/8 (M = 1, 2, 4, 8) at
//     which it still covers height x width, so a crop of twice the output
//     or more is mostly shrunk by the IDCT; `jpeg.channels` channels out.
// Output: [height, width, C] (or [C, height, width] with channels_first) of
// `dtype`: kUInt8 = the resized pixels rounded; kFloat32, kFloat16 or
// kBFloat16 = (pixel * scale - mean[c]) / stddev[c], computed in float32 from
// the unrounded resize and rounded once.
//
//   dataecho::RandomResizedCrop augment({.height = 224, .width = 224,
//       .flip_probability = 0.5, .dtype = dataecho::DType::kFloat16,
//       .mean = dataecho::kImagenetMean, .stddev = dataecho::kImagenetStddev, .seed = 1});
//   auto batches = dataecho::From(dataecho::MakeTFRecordSource(store, shards))
//       .Map([](dataecho::Record r) { return dataecho::EncodedImageRecord(r); },
//            {.parallelism = 0})
//       .Map(augment, {.parallelism = 2})      // decode + crop + resize + flip + normalize
//       .Batch({.batch_size = 256});           // rows copied into one FP16 buffer
//
// Randomness is seeded per (seed, source_index, repeat_index), as the other
// augmenters (augment.h): the same item gets the same crop and flip on every
// run, its echoed copies different ones; Plan() tells which. The decoded and
// the JPEG input give the same window for the same item.
//
// Memory: Validate() refuses an output whose buffer (height x width x one
// channel of `dtype`, at least) exceeds `max_bytes`, and each call checks its
// output with the image's channels before allocating it: RESOURCE_EXHAUSTED
// naming the size and the cap (memory.h).
//
// Antialiasing: a bilinear resize reads at most 2x2 pixels, so shrinking by
// more than 2x aliases. From a JPEG the DCT scale keeps the remaining shrink
// below 2x (for outputs of at least 1/8 of the window); from decoded pixels a
// window more than twice the output side is shrunk by bilinear alone.
// torchvision's PIL backend filters with a wider (antialiasing) kernel there.
//
// Output buffers: an output of kPooledOutputBytes or more (224 x 224 x 3
// float32 is 602 KB) is taken from a pool that this augmenter and its copies
// share, and goes back to it when the last view of the output is released
// (after Batch copied the row, from any thread), at most kPooledOutputsIdle
// idle blocks per size. A fresh allocation of that size is a fresh mapping
// from the allocator: the resize took page faults as it wrote, and the
// release gave the pages back to the kernel (docs/benchmarks.md, "Both
// cores", has what the pool gained). Outputs stay valid after the
// augmenter is gone (their blocks are then freed).
//
// Thread safety: thread-safe (the pool is); otherwise immutable.
#ifndef DATAECHO_RANDOM_RESIZED_CROP_H_
#define DATAECHO_RANDOM_RESIZED_CROP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/augment.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/tensor.h"

namespace dataecho {

// ImageNet's per-channel (RGB) mean and standard deviation of pixel / 255.
inline const std::vector<float> kImagenetMean = {0.485f, 0.456f, 0.406f};
inline const std::vector<float> kImagenetStddev = {0.229f, 0.224f, 0.225f};

struct RandomResizedCropOptions {
  int64_t height = 224;  // output size (> 0)
  int64_t width = 224;
  double min_scale = 0.08;  // crop area as a fraction of the image's, 0 < min <= max <= 1
  double max_scale = 1.0;
  double min_ratio = 3.0 / 4.0;  // crop width / height, log-uniform, 0 < min <= max
  double max_ratio = 4.0 / 3.0;
  int attempts = 10;  // draws before the centred fallback (>= 1)
  // Chance of mirroring left-right (RandomHorizontalFlip, fused: free).
  double flip_probability = 0.0;
  // kUInt8, or kFloat32 / kFloat16 / kBFloat16 normalized as below.
  DType dtype = DType::kUInt8;
  // Float outputs: (pixel * scale - mean[c]) / stddev[c]; one value for all
  // channels or one per channel.
  std::vector<float> mean = {0.0f};
  std::vector<float> stddev = {1.0f};
  float scale = 1.0f / 255.0f;
  bool channels_first = false;  // [C, H, W] (PyTorch's layout) instead of [H, W, C]
  // JPEG input: channels, IDCT, upsampling and size limit. min_height /
  // min_width are ignored: they are the output size when dct_scaling is on.
  JpegCropOptions jpeg;
  bool dct_scaling = true;  // JPEG input: decode at the smallest DCT scale that covers the output
  uint64_t seed = 0;
  int component = 0;  // which component of the Example
  // Cap on one output buffer; 0 = DefaultMemoryCap() (memory.h).
  int64_t max_bytes = 0;
};

// What RandomResizedCrop does to one item.
struct ResizedCropPlan {
  CropWindow window;  // in the full-size image's pixels
  bool flip = false;
};

namespace internal {
class BufferPool;
}  // namespace internal

// Crops, resizes, mirrors, normalizes and casts component `component`, as the
// file comment says. INVALID_ARGUMENT for bad options or an input that is
// neither a uint8 image nor a JPEG; DATA_LOSS for a corrupt JPEG (naming the
// example); RESOURCE_EXHAUSTED for a JPEG over jpeg.max_pixels or an output
// over max_bytes.
class DATAECHO_EXPORT RandomResizedCrop : public Augmenter<RandomResizedCropOptions> {
 public:
  // Outputs of at least this many bytes come from the pool (file comment).
  static constexpr size_t kPooledOutputBytes = size_t{64} << 10;
  // Idle blocks the pool keeps per size: more than a parallel Map's window
  // and a Batch's rows in flight hold at once.
  static constexpr size_t kPooledOutputsIdle = 32;

  explicit RandomResizedCrop(RandomResizedCropOptions options);
  absl::StatusOr<Example> operator()(Example example) const;

  // The window and flip drawn for `example` when its image is height x width.
  ResizedCropPlan Plan(const Example& example, int64_t height, int64_t width) const;
  // INVALID_ARGUMENT naming the first bad option; RESOURCE_EXHAUSTED for an
  // output size whose buffer exceeds the cap.
  absl::Status Validate() const;

 private:
  std::shared_ptr<internal::BufferPool> outputs_;  // shared by copies
};

}  // namespace dataecho

#endif  // DATAECHO_RANDOM_RESIZED_CROP_H_
