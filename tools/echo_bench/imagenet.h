// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_bench --dataset=imagenet: the decode-bound ImageNet-shaped source
// (testing/imagenet_like.h, JPEG image records), its augmentation
// (RandomResizedCrop 224x224 + flip + ImageNet normalization to FP16 in one
// pass) and its batches.
#ifndef DATAECHO_BENCHMARKS_ECHO_BENCH_IMAGENET_H_
#define DATAECHO_BENCHMARKS_ECHO_BENCH_IMAGENET_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config.h"
#include "dataecho/batch.h"
#include "dataecho/echo_placement.h"

namespace dataecho::bench {

// The cached set's shard file names and their directory (under --data_dir,
// else ~/.cache/dataecho), made on first use.
struct ImagenetShards {
  std::string dir;
  std::vector<std::string> names;
};
absl::StatusOr<ImagenetShards> PrepareImagenetShards(const BenchConfig& config);

// RandomResizedCrop to 224x224 (scale 0.08-1, ratio 3/4-4/3, bilinear), flip
// with probability 1/2, (x / 255 - mean) / stddev with ImageNet's mean and
// stddev, FP16 [224, 224, 3]: from the decoded pixels the upstream made.
AugmentFn ImagenetAugmenter(uint64_t seed);

// FP16 rows copied into one fused buffer (the augmenter already cast them).
BatchOptions ImagenetBatch(const BenchConfig& config);

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_ECHO_BENCH_IMAGENET_H_
