// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Example echoing before augmentation, on TFRecord shards in an object store.
//
// Reads the labelled-image records that `dataecho convert` writes, from
// s3:// (or gs://, http(s)://, a local path: any URI OpenObjectStore() knows),
// decodes them in parallel behind a prefetch boundary, echoes every decoded
// image, and only then crops and flips: each repeat gets its own augmentation.
// The crop and flip are cheap, so they run inline in the consumer's thread
// (Map's default); the optional third argument gives them worker threads
// instead (or -1: kAutotune), to compare.
//
//   AWS_ENDPOINT_URL=http://127.0.0.1:9000 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... \
//     s3_tfrecord_echo 's3://bucket/fashion-mnist/train-*.tfrecord' 2.0
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dataecho/dataecho.h"

constexpr char kUsage[] =
    "usage: s3_tfrecord_echo URI_PATTERN [ECHO_FACTOR [AUGMENT_PARALLELISM]]\n"
    "  URI_PATTERN  TFRecord shards of image records, e.g. 's3://bucket/train-*.tfrecord'\n"
    "               (also gs://, http(s)://, local paths; see docs/formats.md)\n"
    "  ECHO_FACTOR  echo factor e >= 1 (default 2)\n"
    "  AUGMENT_PARALLELISM  worker threads of the crop-and-flip Map: 0 = inline (default),\n"
    "               -1 = autotuned\n"
    "s3:// uses AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.\n";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "s3_tfrecord_echo: %s\n", status.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4 || std::string_view(argv[1]) == "--help") {
    std::fputs(kUsage, argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  double echo_factor = 2.0;
  if (argc >= 3) {
    char* end = nullptr;
    echo_factor = std::strtod(argv[2], &end);
    if (*argv[2] == 0 || *end != 0 || !(echo_factor >= 1 && echo_factor <= 1e6)) {
      std::fprintf(stderr, "s3_tfrecord_echo: ECHO_FACTOR must be a number in [1, 1e6]\n%s",
                   kUsage);
      return 2;
    }
  }
  int augment_parallelism = 0;
  if (argc == 4) {
    char* end = nullptr;
    const long n = std::strtol(argv[3], &end, 10);
    if (*argv[3] == 0 || *end != 0 || n < -1 || n > 1024) {
      std::fprintf(stderr, "s3_tfrecord_echo: AUGMENT_PARALLELISM must be -1 or in [0, 1024]\n%s",
                   kUsage);
      return 2;
    }
    augment_parallelism = n == -1 ? dataecho::kAutotune : static_cast<int>(n);
  }
  if (argv[1][0] == '-' && argv[1][1] != 0) {  // a flag: this program takes none
    std::fprintf(stderr, "s3_tfrecord_echo: unknown flag (it takes none)\n%s", kUsage);
    return 2;
  }

  // One store for every scheme; the pattern becomes a sorted list of shards.
  std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  absl::StatusOr<std::vector<std::string>> shards = dataecho::ExpandUris(*store, argv[1]);
  if (!shards.ok()) return Fail(shards.status());

  dataecho::InterleaveOptions interleave;
  interleave.cycle_length = 4;  // read 4 shards at once
  auto decoded =
      dataecho::From(dataecho::MakeTFRecordSource(
                         store, *shards, {.compression = dataecho::Compression::kAuto}, interleave))
          .Map([](dataecho::Record r) { return dataecho::DecodeImageRecord(r); },
               {.parallelism = 2})
          .Prefetch({.depth = 256});  // upstream: reading and decoding run ahead
  auto augment =
      dataecho::Compose(dataecho::RandomCrop({.height = 24, .width = 24, .padding = 2, .seed = 2}),
                        dataecho::RandomFlip({.seed = 3}));
  // Echo before augmentation, so that every repeat is augmented anew; the
  // shuffle buffer spreads the copies of an image apart.
  dataecho::Pipeline<dataecho::Batch> pipeline = dataecho::EchoedBatches(
      std::move(decoded), augment,
      {.placement = dataecho::EchoPlacement::kBeforeAugment,
       .echo = {.factor = echo_factor, .seed = 1},
       .augment = {.parallelism = augment_parallelism},
       .shuffle = {.buffer_size = 2048, .seed = 4},
       .batch = {.batch_size = 128, .cast = dataecho::DType::kFloat16, .scale = 1.0f / 255},
       .prefetch = {.depth = 2}});
  if (!pipeline.status().ok()) return Fail(pipeline.status());

  int64_t batches = 0, rows = 0, fresh = 0;
  while (true) {
    absl::StatusOr<std::optional<dataecho::Batch>> batch = pipeline.Next();
    if (!batch.ok()) return Fail(batch.status());
    if (!batch->has_value()) break;
    ++batches;  // a trainer would run one step on **batch here
    rows += (*batch)->num_rows;
    fresh += (*batch)->fresh_rows;
  }
  std::printf("%zu shards, %lld batches, %lld rows, %lld fresh\n\n%s", shards->size(),
              static_cast<long long>(batches), static_cast<long long>(rows),
              static_cast<long long>(fresh), dataecho::FormatStatsTable(pipeline.Stats()).c_str());
  return 0;
}
