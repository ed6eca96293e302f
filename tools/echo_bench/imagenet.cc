// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "imagenet.h"

#include <filesystem>

#include "dataecho/random_resized_crop.h"
#include "testing/imagenet_like.h"

namespace dataecho::bench {

absl::StatusOr<ImagenetShards> PrepareImagenetShards(const BenchConfig& config) {
  const std::string root = config.data_dir.empty() ? testing::DefaultCacheRoot() : config.data_dir;
  absl::StatusOr<std::vector<std::string>> paths = testing::PrepareImagenetLike(root, {});
  if (!paths.ok()) return paths.status();
  ImagenetShards shards;
  for (const std::string& p : *paths) {
    const std::filesystem::path path(p);
    shards.dir = path.parent_path().string();
    shards.names.push_back(path.filename().string());
  }
  return shards;
}

AugmentFn ImagenetAugmenter(uint64_t seed) {
  RandomResizedCrop crop({.flip_probability = 0.5,
                          .dtype = DType::kFloat16,
                          .mean = kImagenetMean,
                          .stddev = kImagenetStddev,
                          .seed = seed});
  return [crop](Example e) { return crop(std::move(e)); };
}

BatchOptions ImagenetBatch(const BenchConfig& config) {
  return {.batch_size = config.batch_size, .drop_remainder = true};
}

}  // namespace dataecho::bench
