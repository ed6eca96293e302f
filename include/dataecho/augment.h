// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// augment.h: image augmenters and conversions, as Map functions.
//
// Each augmenter is a small immutable function object taking an Example and
// returning a new one (`absl::StatusOr<Example>(Example)`), so it plugs into
// a Map stage. It transforms one component (default 0: the image, shaped
// [height, width, channels] or [height, width]) and writes a new buffer; the
// input's payload is never modified, so echoed copies that share it are safe.
//
// Randomness is seeded and deterministic per (seed, source_index,
// repeat_index, epoch): the same example gets the same crop on every run,
// while its echoed copies (repeat_index 1, 2, ...) and its reads in later
// epochs (Example::epoch, numbered by a Repeat stage, repeat.h) get different
// ones. That is what makes "echo before augmentation" useful, keeps epochs
// from repeating each other's crops, and makes runs reproducible.
//
//   dataecho::RandomCrop crop({.height = 28, .width = 28, .padding = 4, .seed = 1});
//   dataecho::RandomFlip flip({.seed = 2});
//   dataecho::Normalize norm({.mean = {0.286f}, .stddev = {0.353f}, .dtype = DType::kBFloat16});
//   absl::StatusOr<Example> out = crop(example);   // then flip(*out), norm(...)
//   auto augment = dataecho::Compose(crop, flip);  // one Map function: crop, then flip
//
// Thread safety: all augmenters are immutable and thread-safe.
#ifndef DATAECHO_AUGMENT_H_
#define DATAECHO_AUGMENT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/tensor.h"

namespace dataecho {

// A SplitMix64 stream seeded from (seed, source_index, repeat_index, epoch).
// Epoch 0 gives the stream of the three-argument seed. Exposed so that custom
// augmenters draw the same way:
//
//   dataecho::AugmentRng rng(seed, ex.source_index, ex.repeat_index, ex.epoch);
//
// Not thread-safe (a value).
class DATAECHO_EXPORT AugmentRng {
 public:
  AugmentRng(uint64_t seed, uint64_t source_index, uint32_t repeat_index, uint32_t epoch = 0);
  uint64_t Next();
  // Uniform in [0, n); 0 if n == 0.
  uint64_t Uniform(uint64_t n);
  // Uniform in [0, 1).
  double UniformDouble();

 private:
  uint64_t state_;
};

// The mix behind AugmentRng and every seeded stage: SplitMix64 steps over
// (a, b, c). For a program's own seeds and fingerprints, derived the library's
// way (e.g. a seed per epoch and rank: MixSeed(seed, epoch, rank)).
DATAECHO_EXPORT uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c = 0);

// The common part of the augmenters below: an immutable function object that
// keeps its options. A custom augmenter may derive from it the same way.
template <typename Options>
class Augmenter {
 public:
  explicit Augmenter(Options options) : options_(std::move(options)) {}

 protected:
  Options options_;
};

struct RandomCropOptions {
  int64_t height = 0;   // output height (REQUIRED, > 0)
  int64_t width = 0;    // output width (REQUIRED, > 0)
  int64_t padding = 0;  // zero pixels added on every side before cropping
  uint64_t seed = 0;
  int component = 0;  // which component of the Example
};

// A uniformly placed height x width window of the (padded) image. INVALID_ARGUMENT
// if the padded image is smaller than the window.
class DATAECHO_EXPORT RandomCrop : public Augmenter<RandomCropOptions> {
 public:
  using Augmenter::Augmenter;
  absl::StatusOr<Example> operator()(Example example) const;
};

struct RandomFlipOptions {
  double probability = 0.5;  // chance of a horizontal (left-right) flip
  uint64_t seed = 0;
  int component = 0;
};

// Mirrors the image left-right with the given probability (an unflipped
// example is returned as is: no copy).
class DATAECHO_EXPORT RandomFlip : public Augmenter<RandomFlipOptions> {
 public:
  using Augmenter::Augmenter;
  absl::StatusOr<Example> operator()(Example example) const;
};

struct NormalizeOptions {
  // Per channel (or one value for all channels): out = (in * scale - mean) / stddev.
  std::vector<float> mean = {0.0f};
  std::vector<float> stddev = {1.0f};
  float scale = 1.0f / 255.0f;    // applied first (uint8 -> [0, 1])
  DType dtype = DType::kFloat32;  // kFloat32, kFloat16 or kBFloat16
  int component = 0;
};

// Converts a uint8/float32/float16/bfloat16 image to normalized floats.
class DATAECHO_EXPORT Normalize : public Augmenter<NormalizeOptions> {
 public:
  using Augmenter::Augmenter;
  absl::StatusOr<Example> operator()(Example example) const;
};

struct CastOptions {
  DType dtype = DType::kFloat32;  // kFloat32, kFloat16 or kBFloat16
  float scale = 1.0f;             // out = in * scale
  int component = 0;
};

// Converts a component's values to float32, FP16 or BF16 (round to nearest even).
class DATAECHO_EXPORT Cast : public Augmenter<CastOptions> {
 public:
  using Augmenter::Augmenter;
  absl::StatusOr<Example> operator()(Example example) const;
};

// One Map function out of several: applies each of `steps` (augmenters, or
// any functions `absl::StatusOr<Example>(Example)`) to the result of the one
// before, in order, and returns the first error. The steps are copied in;
// the result is as thread-safe as they are.
template <typename... Steps>
auto Compose(Steps... steps) {
  return [... steps = std::move(steps)](Example example) -> absl::StatusOr<Example> {
    absl::StatusOr<Example> out = std::move(example);
    ((out = out.ok() ? steps(*std::move(out)) : std::move(out)), ...);
    return out;
  };
}

}  // namespace dataecho

#endif  // DATAECHO_AUGMENT_H_
