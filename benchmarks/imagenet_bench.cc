// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// imagenet_bench: the decode-bound ImageNet-shaped input pipeline, measured
// as a whole program (benchmarks/python/vs_torchvision.py runs it next to
// torchvision; docs/benchmarks.md has the figures and commands).
//
//   imagenet_bench --mode=prepare            # make/cache the set, print its shards as JSON
//   imagenet_bench --mode=throughput --cpus=1 --threads=1 --count=2048
//       # TFRecord shards -> RandomResizedCrop from the JPEG (decode + crop + resize +
//       # flip + normalize + cast) on a Map of --threads -> Batch; prints images/s as JSON
//   imagenet_bench --mode=memory --placement=decoded --shuffle=10000
//       # peak RSS with a shuffle buffer of decoded images (or --placement=encoded:
//       # of encoded records, echo before decoding)
#include <sys/resource.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "bench_main.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/internal/counter.h"
#include "dataecho/pipeline.h"
#include "dataecho/random_resized_crop.h"
#include "dataecho/stats.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "testing/cpus.h"
#include "testing/imagenet_like.h"

ABSL_FLAG(std::string, mode, "throughput", "prepare | throughput | memory");
ABSL_FLAG(int64_t, images, 5000, "images in the ImageNet-like set");
ABSL_FLAG(int64_t, seed, 1, "seed of the set and of the augmentation");
ABSL_FLAG(std::string, cache_dir, "", "cache of the set [~/.cache/dataecho]");
ABSL_FLAG(int, cpus, 0, "run on this many CPUs (sched_setaffinity; 0 = all)");
ABSL_FLAG(int, threads, 1,
          "Map parallelism of the decode/augment (0 = in the consumer; -1 = kAutotune: the Map "
          "measures fn inline, then chooses)");
ABSL_FLAG(int64_t, count, 2048, "images measured (after one warm-up batch)");
ABSL_FLAG(int64_t, batch_size, 64, "rows per batch");
ABSL_FLAG(std::string, dtype, "float32", "output dtype: float32 | float16 | bfloat16 | uint8");
ABSL_FLAG(bool, chw, true, "output [C, H, W] per image (PyTorch's layout) instead of [H, W, C]");
ABSL_FLAG(std::string, path, "jpeg",
          "jpeg: crop straight from the JPEG (DCT scaling); decoded: full decode, then crop");
ABSL_FLAG(bool, fast_idct, false, "libjpeg's fast integer IDCT");
ABSL_FLAG(bool, fast_upsample, false, "chroma upsampling by replication");
ABSL_FLAG(std::string, placement, "decoded",
          "memory mode: decoded (shuffle decoded images, crop after) | encoded (shuffle "
          "encoded records, decode + crop after)");
ABSL_FLAG(int64_t, shuffle, 10000, "memory mode: shuffle buffer (images)");
ABSL_FLAG(double, echo, 1, "memory mode: echo factor before the shuffle");
ABSL_FLAG(bool, stats, false, "print the stage stats (FormatStatsTable) to stderr at the end");
ABSL_FLAG(int, buffer, -2,
          "throughput mode: MapOptions::buffer of the Map (-1 = kAutotune, -2 = 2 x threads, "
          "or kAutotune with --threads=-1)");

namespace dataecho {
namespace {

absl::StatusOr<std::vector<std::string>> Shards() {
  std::string root = absl::GetFlag(FLAGS_cache_dir);
  if (root.empty()) root = testing::DefaultCacheRoot();
  return testing::PrepareImagenetLike(root,
                                      {.images = absl::GetFlag(FLAGS_images),
                                       .seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed))});
}

absl::StatusOr<DType> OutputDType() {
  absl::StatusOr<DType> d = ParseDType(absl::GetFlag(FLAGS_dtype));
  if (!d.ok())
    return absl::InvalidArgumentError(
        fmt::format("--dtype: {}", std::string(d.status().message())));
  return d;
}

RandomResizedCrop Augment(DType dtype) {
  return RandomResizedCrop({.flip_probability = 0.5,
                            .dtype = dtype,
                            .mean = kImagenetMean,
                            .stddev = kImagenetStddev,
                            .channels_first = absl::GetFlag(FLAGS_chw),
                            .jpeg = {.fast_idct = absl::GetFlag(FLAGS_fast_idct),
                                     .fast_upsample = absl::GetFlag(FLAGS_fast_upsample)},
                            .seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed))});
}

// Endless records of the set (epoch after epoch), two shards at a time.
Pipeline<Record> Records(const std::vector<std::string>& shards) {
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  return From(RepeatSource<Record>(
      [store, shards] { return MakeTFRecordSource(store, shards, {}, {.cycle_length = 2}); }, -1));
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

absl::Status Throughput(const std::vector<std::string>& shards) {
  DATAECHO_ASSIGN_OR_RETURN(const DType dtype, OutputDType());
  const int threads = absl::GetFlag(FLAGS_threads);
  const int parallelism = threads == -1 ? kAutotune : threads;
  const int64_t batch = absl::GetFlag(FLAGS_batch_size), count = absl::GetFlag(FLAGS_count);
  const bool from_jpeg = absl::GetFlag(FLAGS_path) == "jpeg";
  if (!from_jpeg && absl::GetFlag(FLAGS_path) != "decoded")
    return absl::InvalidArgumentError("--path must be jpeg or decoded");
  const RandomResizedCrop augment = Augment(dtype);
  // jpeg: one Map does decode + crop + resize + flip + normalize + cast.
  // decoded: a full decode, then the crop from the pixels (echo-before-
  // augmentation's split), on the same Map thread.
  auto work = [augment, from_jpeg](Record r) -> absl::StatusOr<Example> {
    absl::StatusOr<Example> e = from_jpeg ? EncodedImageRecord(r) : DecodeImageRecord(r);
    if (!e.ok()) return e.status();
    return augment(*std::move(e));
  };
  const int buffer_flag = absl::GetFlag(FLAGS_buffer);
  const int buffer = buffer_flag == -1 || (buffer_flag == -2 && threads == -1) ? kAutotune
                     : buffer_flag == -2 ? 2 * std::max(threads, 1)
                                         : buffer_flag;
  Pipeline<Batch> p =
      Records(shards)
          .Map(work, {.parallelism = parallelism, .buffer = buffer, .name = "decode_crop"})
          .Batch({.batch_size = batch, .drop_remainder = true});
  DATAECHO_RETURN_IF_ERROR(p.status());
  const int64_t batches = std::max<int64_t>(1, count / batch);
  int64_t t0 = 0;
  double cpu0 = 0;
  std::string shape;
  for (int64_t i = 0; i <= batches; ++i) {
    if (i == 1) {  // after one warm-up batch (threads started, pools warm)
      t0 = internal::NowNanos();
      cpu0 = CpuSeconds();
    }
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Batch> b, p.Next());
    if (!b.has_value()) return absl::OutOfRangeError("the source ended");
    shape = ShapeString(b->components[0].shape());
  }
  const double seconds = static_cast<double>(internal::NowNanos() - t0) * 1e-9;
  const double cpu = CpuSeconds() - cpu0;
  const double n = static_cast<double>(batches * batch);
  std::printf(
      "{\"images\": %.0f, \"seconds\": %.4f, \"images_per_second\": %.2f, \"cpu_seconds\": %.4f, "
      "\"images_per_cpu_second\": %.2f, \"threads\": %d, \"cpus\": %d, \"path\": \"%s\", "
      "\"batch_shape\": \"%s\", \"dtype\": \"%s\"}\n",
      n, seconds, n / seconds, cpu, n / cpu, threads, absl::GetFlag(FLAGS_cpus),
      from_jpeg ? "jpeg" : "decoded", shape.c_str(), std::string(DTypeName(dtype)).c_str());
  if (absl::GetFlag(FLAGS_stats)) std::fprintf(stderr, "%s", FormatStatsTable(p.Stats()).c_str());
  return absl::OkStatus();
}

// Fills a shuffle buffer of --shuffle images (decoded, or encoded records),
// then half as many more images through it; prints the peak RSS.
absl::Status Memory(const std::vector<std::string>& shards) {
  const bool decoded = absl::GetFlag(FLAGS_placement) == "decoded";
  if (!decoded && absl::GetFlag(FLAGS_placement) != "encoded")
    return absl::InvalidArgumentError("--placement must be decoded or encoded");
  const int threads = std::max(1, absl::GetFlag(FLAGS_threads));
  const int64_t buffer = absl::GetFlag(FLAGS_shuffle), batch = absl::GetFlag(FLAGS_batch_size);
  const uint64_t seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  const RandomResizedCrop augment = Augment(DType::kFloat16);
  Pipeline<Example> upstream =
      decoded ? Records(shards).Map([](Record r) { return DecodeImageRecord(r); },
                                    {.parallelism = threads, .name = "decode"})
              : Records(shards).Map([](Record r) { return EncodedImageRecord(r); },
                                    {.parallelism = 0, .name = "parse"});
  Pipeline<Batch> p = std::move(upstream)
                          .Prefetch({.depth = 256})
                          .Echo({.factor = absl::GetFlag(FLAGS_echo), .seed = seed + 1})
                          .Shuffle({.buffer_size = buffer, .seed = seed + 2})
                          .Map(augment, {.parallelism = threads, .name = "augment"})
                          .Batch({.batch_size = batch, .drop_remainder = true});
  DATAECHO_RETURN_IF_ERROR(p.status());
  // The first batch fills the buffer; then half a buffer more goes through it.
  const int64_t batches = buffer / batch / 2 + 1;
  const int64_t t0 = internal::NowNanos();
  for (int64_t i = 0; i < batches; ++i) {
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Batch> b, p.Next());
    if (!b.has_value()) return absl::OutOfRangeError("the source ended");
  }
  double held = 0;
  for (const StageStats& s : p.Stats()) {
    if (s.name == "shuffle") held = s.Extra("peak_bytes_held");
  }
  std::printf(
      "{\"placement\": \"%s\", \"shuffle\": %lld, \"echo\": %g, \"peak_rss_bytes\": %lld, "
      "\"shuffle_peak_bytes_held\": %.0f, \"seconds\": %.2f}\n",
      decoded ? "decoded" : "encoded", static_cast<long long>(buffer), absl::GetFlag(FLAGS_echo),
      static_cast<long long>(PeakRssBytes()), held,
      static_cast<double>(internal::NowNanos() - t0) * 1e-9);
  return absl::OkStatus();
}

absl::Status Run() {
  if (absl::Status s = testing::RunOnCpus(absl::GetFlag(FLAGS_cpus)); !s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> shards = Shards();
  if (!shards.ok()) return shards.status();
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "prepare") {
    std::printf("{\"shards\": [\"%s\"]}\n",
                fmt::format("{}", fmt::join(*shards, "\", \"")).c_str());
    return absl::OkStatus();
  }
  if (mode == "throughput") return Throughput(*shards);
  if (mode == "memory") return Memory(*shards);
  return absl::InvalidArgumentError(fmt::format("--mode={}: prepare, throughput or memory", mode));
}

}  // namespace
}  // namespace dataecho

int main(int argc, char** argv) {
  return dataecho::bench::Main(argc, argv, "imagenet_bench", dataecho::Run);
}
