// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// testing/synthetic_images.h: small grayscale image Examples made in memory,
// for benchmarks and tests whose pipelines need images but not real ones
// (the trace's cost, its spans).
//
//   std::vector<dataecho::Example> images = dataecho::testing::SyntheticImages(2000, 28, 28);
//   dataecho::Pipeline<dataecho::Example> p = dataecho::FromVector(std::move(images));
//
// Thread safety: a pure function.
#ifndef DATAECHO_TESTING_SYNTHETIC_IMAGES_H_
#define DATAECHO_TESTING_SYNTHETIC_IMAGES_H_

#include <cstdint>
#include <vector>

#include "dataecho/example.h"

namespace dataecho::testing {

// `n` Examples; image i is one uint8 tensor of shape [height, width, 1] whose
// byte j is (i * 31 + j) mod 256, label i % 10, source_index i.
std::vector<Example> SyntheticImages(int64_t n, int64_t height, int64_t width);

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTING_SYNTHETIC_IMAGES_H_
