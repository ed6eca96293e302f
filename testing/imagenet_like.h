// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// testing/imagenet_like.h: an ImageNet-shaped JPEG dataset made here,
// deterministic from a seed, for benchmarks and tests of the decode-bound
// path (a few thousand images for benchmarks, a handful for tests).
//
// Every image is a random crop (25-100 % of the area, the output's aspect
// ratio) of one of the natural colour photographs scikit-image ships
// (Debian python3-skimage: astronaut, chelsea, coffee, rocket, motorcycle,
// Hubble deep field, retina, IHC), resized to a random size of
// min_side..max_side pixels per side (triangle filter), mirrored with
// probability 1/2, with a per-channel gain of 0.9-1.1, encoded as a JPEG of
// `quality` (4:2:0). So the decoder sees real image statistics, not noise or
// flat colour. Labels are drawn uniformly from 0..999. Records are image
// records (formats/image_record.h, JPEG encoding) in `shards` TFRecord files,
// record i in shard i % shards.
//
//   absl::StatusOr<std::vector<std::string>> shards =
//       dataecho::testing::PrepareImagenetLike(dataecho::testing::DefaultCacheRoot(), {});
//   // ~/.cache/dataecho/imagenet-like-5000-s1/train-00000-of-00008.tfrecord, ...
//
// Image i depends only on (seed, i) and the photographs: the same options
// give the same bytes (with the same libjpeg-turbo and libpng).
//
// Thread safety: the functions are thread-safe, but two processes preparing
// one directory at once may both write it.
#ifndef DATAECHO_TESTING_IMAGENET_LIKE_H_
#define DATAECHO_TESTING_IMAGENET_LIKE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/tensor.h"

namespace dataecho::testing {

// Where python3-skimage installs its sample images.
inline constexpr char kSkimageDataDir[] = "/usr/lib/python3/dist-packages/skimage/data";

struct ImagenetLikeOptions {
  int64_t images = 5000;
  int shards = 8;
  uint64_t seed = 1;
  int min_side = 300;  // each side drawn uniformly from [min_side, max_side]
  int max_side = 500;
  int quality = 90;
  std::string photo_dir = kSkimageDataDir;
};

// The source photographs (uint8 [H, W, 3]), in a fixed order. NOT_FOUND
// naming the file (and the package) if one is missing.
absl::StatusOr<std::vector<Tensor>> LoadPhotos(const std::string& photo_dir = kSkimageDataDir);

// Image `index` of the set (uint8 [H, W, 3], before JPEG encoding) and its label.
struct LabelledImage {
  Tensor image;
  int64_t label = 0;
};
absl::StatusOr<LabelledImage> MakeImagenetLikeImage(const std::vector<Tensor>& photos,
                                                    const ImagenetLikeOptions& options,
                                                    int64_t index);

// Writes the set into `dir` (created if missing) and returns the shard paths.
absl::StatusOr<std::vector<std::string>> WriteImagenetLike(const std::string& dir,
                                                           const ImagenetLikeOptions& options);

// The cached set: `cache_root`/imagenet-like-<images>-s<seed>[-<sides>-q<quality>]
// is written once (a DONE file marks a complete set) and reused after.
absl::StatusOr<std::vector<std::string>> PrepareImagenetLike(const std::string& cache_root,
                                                             const ImagenetLikeOptions& options);

// $XDG_CACHE_HOME/dataecho, else $HOME/.cache/dataecho, else /tmp/dataecho-cache.
std::string DefaultCacheRoot();

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTING_IMAGENET_LIKE_H_
