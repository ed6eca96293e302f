// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// reference_pipeline: the C++ pipeline that tests/python/test_determinism.py
// builds from Python, printing one line per batch with CRC-32C digests of its
// buffers, so the test can check that Python gets the very same batches:
//
//   python_reference_pipeline IMAGES.gz LABELS.gz EXAMPLES [EPOCHS]
//   -> "<rows> <fresh_rows> <epoch> <crc images> <crc labels> <crc source> <crc repeat>"
//      per batch
//
// Pipeline: IDX source, the first EXAMPLES examples, Repeat(EPOCHS, default
// 1), Prefetch(64), Echo(2,
// seed 1), RandomCrop(28x28, padding 2, seed 3) + RandomFlip(seed 4) on 2
// threads, Shuffle(1000, seed 5), Batch(256, float16, x / 255 normalized by
// mean 0.286 and stddev 0.353).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "dataecho/dataecho.h"

namespace {

uint32_t Digest(const dataecho::Tensor& t) {
  return dataecho::Crc32c(t.buffer().data(), t.byte_size());
}

int Run(const std::string& images, const std::string& labels, int64_t examples, int64_t epochs) {
  std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  const auto crop_and_flip =
      dataecho::Compose(dataecho::RandomCrop({.height = 28, .width = 28, .padding = 2, .seed = 3}),
                        dataecho::RandomFlip({.seed = 4}));
  auto pipeline = dataecho::From(dataecho::MakeIdxSource(store, images, labels))
                      .Take(examples)
                      .Repeat(epochs)
                      .Prefetch({.depth = 64})
                      .Echo({.factor = 2.0, .seed = 1})
                      .Map(crop_and_flip, {.parallelism = 2})
                      .Shuffle({.buffer_size = 1000, .seed = 5})
                      .Batch({.batch_size = 256,
                              .cast = dataecho::DType::kFloat16,
                              .scale = 1.0f / 255,
                              .mean = {0.286f},
                              .stddev = {0.353f}});
  while (true) {
    absl::StatusOr<std::optional<dataecho::Batch>> b = pipeline.Next();
    if (!b.ok()) {
      std::fprintf(stderr, "reference_pipeline: %s\n", b.status().ToString().c_str());
      return 1;
    }
    if (!b->has_value()) return 0;
    const dataecho::Batch& batch = **b;
    std::printf("%lld %lld %u %08x %08x %08x %08x\n", static_cast<long long>(batch.num_rows),
                static_cast<long long>(batch.fresh_rows), batch.epoch, Digest(batch.components[0]),
                Digest(batch.labels), Digest(batch.source_indices), Digest(batch.repeat_indices));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s IMAGES LABELS EXAMPLES [EPOCHS]\n", argv[0]);
    return 2;
  }
  return Run(argv[1], argv[2], std::atoll(argv[3]), argc == 5 ? std::atoll(argv[4]) : 1);
}
