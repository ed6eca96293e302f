// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// A user's program of the README's shape, compiled by benchmarks/compile_time.sh
// against an installed dataecho to measure what including the library costs:
// the README's headers (builder.h, the formats it reads) and the augmenter,
// store and stats table it uses.
#include <cstdio>
#include <string>
#include <vector>

#include "dataecho/augment.h"
#include "dataecho/builder.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/stats.h"
#include "dataecho/storage/local_store.h"

int main(int argc, char** argv) {
  std::vector<std::string> shards(argv + 1, argv + argc);
  std::shared_ptr<dataecho::ObjectStore> store = dataecho::NewLocalStore();
  dataecho::RandomCrop crop({.height = 28, .width = 28, .padding = 4, .seed = 3});
  auto pipeline = dataecho::From(dataecho::MakeTFRecordSource(store, shards))
                      .Map(dataecho::DecodeImageRecord, {.parallelism = 2})
                      .Prefetch({.depth = 256})
                      .Echo({.factor = 2.0, .seed = 1})
                      .Map(crop)
                      .Shuffle({.buffer_size = 10000, .seed = 2})
                      .Batch({.batch_size = 256, .cast = dataecho::DType::kFloat16})
                      .Prefetch({.depth = 2});
  int64_t rows = 0;
  for (dataecho::Batch& batch : pipeline) rows += batch.num_rows;
  if (!pipeline.status().ok()) {
    std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  std::printf("%lld rows\n%s", static_cast<long long>(rows),
              dataecho::FormatStatsTable(pipeline.Stats()).c_str());
  return 0;
}
