// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// batch_options.h: the options of Batch (batch.h) and PaddedBatch
// (padded_batch.h). Apart from the stages so that the builder (builder.h) can
// take them without the stages' definitions.
//
//   dataecho::BatchOptions fp16 = {.batch_size = 256, .cast = dataecho::DType::kFloat16};
//   dataecho::PaddedBatchOptions padded = {.batch_size = 32, .padded_shapes = {{-1}}};
#ifndef DATAECHO_BATCH_OPTIONS_H_
#define DATAECHO_BATCH_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/dtype.h"
#include "dataecho/export.h"
#include "dataecho/tensor.h"

namespace dataecho {

struct DATAECHO_EXPORT BatchOptions {
  // The most rows a batch may have: consumers count rows in an int (the
  // example trainer, DLPack-style APIs and most kernels), and far above any
  // batch a training step takes (the largest published are 64K-128K rows).
  static constexpr int64_t kMaxBatchSize = (int64_t{1} << 31) - 1;
  // Bytes per row besides the components: label, source and repeat index.
  static constexpr int64_t kIndexBytesPerRow = 8 + 8 + 4;

  // Rows per batch. 1..kMaxBatchSize.
  int64_t batch_size = 32;
  // Drop a final batch with fewer than batch_size rows.
  bool drop_remainder = false;
  // Output dtype of every component: std::nullopt keeps the input dtype;
  // kFloat32, kFloat16 or kBFloat16 converts (from uint8, int32, float32,
  // float16 or bfloat16).
  std::optional<DType> cast;
  // Normalization applied with the cast (requires `cast`); empty mean/stddev
  // mean 0 / 1. mean and stddev have one value per channel (or one for all).
  float scale = 1.0f;
  std::vector<float> mean;
  std::vector<float> stddev;
  // Alignment of every fused buffer.
  size_t alignment = 64;
  // Cap on one batch's buffers: batch_size x (a row's bytes after the cast +
  // kIndexBytesPerRow). 0 = DefaultMemoryCap() (memory.h).
  int64_t max_bytes = 0;
  // Threads that copy and convert the rows of one batch, the caller's
  // included (1..64). With threads > 1 and batch_size >= parallel_min_rows,
  // the caller pulls the rows and hands them in contiguous chunks (about
  // 256 KiB of output, ending on a cache line) to a small pool (the stage's
  // own threads - 1 workers) that converts each chunk as it is in; once the
  // batch is in, the caller converts chunks too. The same bytes as one
  // thread. Smaller batches do not pay for the hand-off (docs/benchmarks.md:
  // BM_BatchFP16, 1 vs 2 threads).
  int threads = 1;
  int64_t parallel_min_rows = 4096;
  std::string name = "batch";

  absl::Status Validate() const;
};

struct DATAECHO_EXPORT PaddedBatchOptions {
  // Rows per batch. 1..BatchOptions::kMaxBatchSize (above).
  int64_t batch_size = 32;
  // Drop a final batch with fewer than batch_size rows.
  bool drop_remainder = false;
  // Per component: the shape to pad to (its rank must be the rows'), -1 = the
  // longest in the batch; each other entry >= 0. Components past the end of
  // the list, or with an empty entry, pad every dimension to the longest.
  std::vector<Shape> padded_shapes;
  // Per component: the value of padding cells, converted to its dtype;
  // components past the end of the list pad with 0.
  std::vector<double> padding_values;
  // Append a mask per component (see the file comment).
  bool masks = true;
  // Append each row's unpadded shape per component (see the file comment).
  bool lengths = true;
  // Alignment of every buffer.
  size_t alignment = 64;
  // Cap on one batch's buffers: data, masks and lengths of the padded rows
  // plus 20 bytes a row of index columns. 0 = DefaultMemoryCap() (memory.h).
  int64_t max_bytes = 0;
  std::string name = "padded_batch";

  absl::Status Validate() const;
  // Where component `i` (of `n`) has its mask / lengths in Batch::components;
  // -1 if the option is off.
  int MaskIndex(int i, int n) const { return masks ? n + i : -1; }
  int LengthsIndex(int i, int n) const { return lengths ? (masks ? 2 * n : n) + i : -1; }
};

}  // namespace dataecho

#endif  // DATAECHO_BATCH_OPTIONS_H_
