// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/data.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "dataecho/augment.h"
#include "dataecho/echo_placement.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "testing/http_server.h"
#include "trainer/mlp.h"
#include "trainer/slow_upstream.h"

namespace trainer {
namespace {

// Spends `ns` of the calling thread's CPU time (a CPU-heavy augmentation).
void BurnCpu(int64_t ns) {
  auto cpu = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  };
  const int64_t end = cpu() + ns;
  volatile uint64_t sink = 0;
  while (cpu() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + static_cast<uint64_t>(i);
  }
}

constexpr int kSide = 28;
constexpr int kPixels = kSide * kSide;

// Independent seeds for the random stages, all derived from --seed.
uint64_t DeriveSeed(uint64_t seed, uint64_t stage) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + stage * 0xBF58476D1CE4E5B9ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The first `limit` (0 = all) examples of an IDX image/label file pair, read
// through the library's IDX source: uint8 [28, 28, 1] images and labels.
absl::StatusOr<std::vector<dataecho::Example>> ReadIdxExamples(const std::string& dir,
                                                               const std::string& prefix,
                                                               int64_t limit) {
  dataecho::StagePtr<dataecho::Example> source = dataecho::MakeIdxSource(
      dataecho::OpenObjectStore(), fmt::format("{}/{}-images-idx3-ubyte.gz", dir, prefix),
      fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, prefix));
  std::vector<dataecho::Example> out;
  while (limit == 0 || static_cast<int64_t>(out.size()) < limit) {
    absl::StatusOr<std::optional<dataecho::Example>> ex = source->Next();
    if (!ex.ok()) return ex.status();
    if (!ex->has_value()) break;
    if ((*ex)->components.size() != 1 || (*ex)->components[0].num_elements() != kPixels) {
      return absl::InvalidArgumentError(fmt::format("{}/{}: expected 28x28 images", dir, prefix));
    }
    out.push_back(**std::move(ex));
  }
  return out;
}

class PipelineData final : public TrainData {
 public:
  PipelineData(std::unique_ptr<dataecho::testing::HttpServer> server,
               dataecho::Pipeline<dataecho::Batch> p)
      : server_(std::move(server)), pipeline_(std::move(p)) {}
  absl::StatusOr<std::optional<dataecho::Batch>> Next() override { return pipeline_.Next(); }
  std::vector<dataecho::StageStats> Stats() const override { return pipeline_.Stats(); }
  absl::StatusOr<std::string> SaveState() override { return pipeline_.SaveState(); }
  absl::StatusOr<absl::Cord> SaveStateCord() override { return pipeline_.SaveStateCord(); }
  absl::Status RestoreState(std::string_view state) override {
    return pipeline_.RestoreState(state);
  }
  absl::Status ReportLoss(const dataecho::Batch& batch,
                          std::span<const float> row_losses) override {
    return pipeline_.ReportLoss(batch, row_losses);
  }

 private:
  // Declared first: destroyed after the pipeline that reads from it.
  std::unique_ptr<dataecho::testing::HttpServer> server_;
  dataecho::Pipeline<dataecho::Batch> pipeline_;
};

}  // namespace

std::unique_ptr<TrainData> PipelineTrainData(std::unique_ptr<dataecho::testing::HttpServer> server,
                                             dataecho::Pipeline<dataecho::Batch> batches) {
  return std::make_unique<PipelineData>(std::move(server), std::move(batches));
}

double Evaluate(Mlp& model, const TestSet& test, double target_accuracy, double train_seconds,
                TrainResult* result) {
  const auto t0 = std::chrono::steady_clock::now();
  const double accuracy =
      model.Accuracy(test.images.data(), test.labels.data(), static_cast<int>(test.size));
  result->eval_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result->curve.push_back({result->fresh_examples_total, accuracy});
  if (!result->fresh_examples_to_target && accuracy >= target_accuracy) {
    result->fresh_examples_to_target = result->fresh_examples_total;
    result->steps_to_target = result->steps_total;
    result->seconds_to_target = train_seconds;
  }
  return accuracy;
}

absl::StatusOr<TestSet> LoadTestSet(const TrainOptions& o) {
  absl::StatusOr<std::vector<dataecho::Example>> test =
      ReadIdxExamples(o.idx_dir, "t10k", o.test_limit);
  if (!test.ok()) return test.status();
  TestSet out;
  out.size = static_cast<int64_t>(test->size());
  out.images.reserve(test->size() * kPixels);
  for (const dataecho::Example& ex : *test) {
    for (uint8_t p : ex.components[0].data<uint8_t>()) {
      out.images.push_back((p * (1.0f / 255.0f) - kPixelMean) / kPixelStddev);
    }
    out.labels.push_back(ex.label);
  }
  return out;
}

dataecho::Pipeline<dataecho::Batch> EchoedTrainBatches(
    dataecho::Pipeline<dataecho::Example> upstream, const TrainOptions& o, bool drop_remainder,
    std::shared_ptr<dataecho::MapParallelism> decode) {
  using dataecho::Example;
  const auto crop_and_flip = dataecho::Compose(
      dataecho::RandomCrop(
          {.height = kSide, .width = kSide, .padding = 2, .seed = DeriveSeed(o.seed, 2)}),
      dataecho::RandomFlip({.seed = DeriveSeed(o.seed, 3)}));
  const int64_t burn_ns = static_cast<int64_t>(o.augment_cpu_ms * 1e6);
  auto augment = [crop_and_flip, burn_ns](Example ex) -> absl::StatusOr<Example> {
    if (burn_ns > 0) BurnCpu(burn_ns);
    return crop_and_flip(std::move(ex));
  };
  // Adaptive: a pool of two batches of recent examples, and repeats only
  // while fewer than two batches wait for the training loop (the demand gate
  // on the last Prefetch's queue), not whenever the queues downstream have room.
  const bool adaptive = o.insert == EchoInsert::kAdaptive;
  dataecho::Pipeline<dataecho::Batch> batches = dataecho::EchoedBatches(
      std::move(upstream).Prefetch({.depth = o.prefetch_depth}), augment,
      {.placement = o.insert,
       .echo = {.factor = o.echo, .seed = DeriveSeed(o.seed, 4)},
       .adaptive = {.max_factor = o.max_echo,
                    .pool_size = 2 * int64_t{o.batch_size},
                    .seed = DeriveSeed(o.seed, 4)},
       .gate_below = 2,
       .augment = {.parallelism = 1, .name = "augment"},
       .shuffle = {.buffer_size = o.shuffle_buffer, .seed = DeriveSeed(o.seed, 5)},
       .batch = {.batch_size = o.batch_size,
                 .drop_remainder = drop_remainder,
                 .cast = dataecho::DType::kFloat32,
                 .scale = 1.0f / 255.0f,
                 .mean = {kPixelMean},
                 .stddev = {kPixelStddev}},
       .prefetch = adaptive ? dataecho::PrefetchOptions{.depth = 4, .name = "trainer_prefetch"}
                            : dataecho::PrefetchOptions{.depth = 2},
       // Auto: placement and factor (at most max_echo) from the measured costs.
       .auto_placement = {.max_factor = o.max_echo,
                          .prefer = o.prefer,
                          .seed = DeriveSeed(o.seed, 4)},
       // Auto: the decode Map's workers too, where it is the bottleneck.
       .decode_parallelism = std::move(decode)});
  return batches;
}

absl::StatusOr<std::unique_ptr<TrainData>> MakeTrainData(const TrainOptions& o,
                                                         double upstream_examples_per_second) {
  using dataecho::Example;
  std::unique_ptr<dataecho::testing::HttpServer> server;
  dataecho::Pipeline<Example> upstream(absl::UnknownError("unset"));
  std::shared_ptr<dataecho::MapParallelism> decode;  // the shards' decode Map
  if (o.train_shards.empty()) {
    // The IDX files read by the library's source, which saves its state by
    // reference (rows and the files' fingerprints): a resume over files
    // that changed is DATA_LOSS naming them. Endless epochs, each in its own
    // order (the Shuffle, as large as the data, restarts from (seed,
    // epoch)); the examples carry their epoch, so crops and flips differ
    // from epoch to epoch.
    std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
    const std::string images = fmt::format("{}/train-images-idx3-ubyte.gz", o.idx_dir);
    absl::StatusOr<dataecho::IdxHeader> header = dataecho::ReadIdxHeader(store, images);
    if (!header.ok()) return header.status();
    if (header->dims.size() != 3 || header->dims[1] != kSide || header->dims[2] != kSide) {
      return absl::InvalidArgumentError(fmt::format("{}/train: expected 28x28 images", o.idx_dir));
    }
    int64_t n = static_cast<int64_t>(header->rows());
    upstream = dataecho::From(dataecho::MakeIdxSource(
        store, images, fmt::format("{}/train-labels-idx1-ubyte.gz", o.idx_dir)));
    if (o.train_limit > 0) {
      n = std::min(n, o.train_limit);
      upstream = std::move(upstream).Take(o.train_limit);
    }
    upstream = std::move(upstream)
                   .Shuffle({.buffer_size = std::max<int64_t>(n, 1),
                             .seed = DeriveSeed(o.seed, 1),
                             .name = "epoch_order"})
                   .Repeat(-1);
  } else {
    std::shared_ptr<dataecho::ObjectStore> local = dataecho::OpenObjectStore();
    absl::StatusOr<std::vector<std::string>> files = dataecho::ExpandUris(*local, o.train_shards);
    if (!files.ok()) return files.status();
    std::shared_ptr<dataecho::ObjectStore> store = local;
    std::vector<std::string> uris = *files;
    if (upstream_examples_per_second > 0) {
      absl::StatusOr<SlowUpstream> slow =
          ServeThrottled(local, *files, upstream_examples_per_second, o.upstream_over_http);
      if (!slow.ok()) return slow.status();
      server = std::move(slow->server);
      store = std::move(slow->store);
      uris = std::move(slow->uris);
    }
    // Endless epochs over the shards, each reading the files in a new order.
    dataecho::InterleaveOptions order{.file_order_seed = DeriveSeed(o.seed, 6)};
    decode = std::make_shared<dataecho::MapParallelism>();
    upstream = dataecho::From(dataecho::MakeTFRecordSource(store, uris, {}, order))
                   .Repeat(-1)
                   .Map([](const dataecho::Record& r) { return dataecho::DecodeImageRecord(r); },
                        {.parallelism = o.decode_parallelism,
                         .name = "decode",
                         .parallelism_control = decode});
  }

  dataecho::Pipeline<dataecho::Batch> batches =
      EchoedTrainBatches(std::move(upstream), o, /*drop_remainder=*/true, std::move(decode));
  if (!batches.status().ok()) return batches.status();
  return PipelineTrainData(std::move(server), std::move(batches));
}

}  // namespace trainer
