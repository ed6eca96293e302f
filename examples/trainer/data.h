// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// data.h: the example trainer's data: the Fashion-MNIST test set in memory,
// and the training pipeline built with the dataecho library.
//
// The training pipeline, for each insertion point of Echo:
//
//   source (IDX in memory in a new order each epoch, or TFRecord shards in a
//           new file order each epoch; .Repeat(-1): elements carry their epoch)
//     -> Map(decode) -> Prefetch                      (the upstream)
//     -> [Echo]  before_augment, or [AdaptiveEcho] adaptive (max_echo, a pool
//                of two batches: repeats only while no fresh example is ready
//                and fewer than two batches wait for the training loop)
//     -> Map(random crop, padding 2 + horizontal flip)
//     -> [Echo]  after_augment
//     -> Shuffle(shuffle_buffer)
//     -> Batch(float32, standardized)
//     -> [Echo]  batch
//     -> Prefetch(2; 4 with adaptive)                 (the trainer's input)
//
// Everything after the upstream's Prefetch is the library's
// dataecho::EchoedBatches (dataecho/echo_placement.h) with the placement as
// TrainOptions::insert; the echo stage is there at every factor, 1 included
// (where it passes examples through unchanged).
//
// With upstream_ratio > 0 the shards are served by a loopback HTTP server and
// read through a throttled store capped so that the upstream delivers one
// batch of fresh examples per `upstream_ratio` training steps.
//
//   absl::StatusOr<trainer::TestSet> test = trainer::LoadTestSet(options);
//   auto data = trainer::MakeTrainData(options, /*upstream_examples_per_second=*/0);
//   auto batch = (*data)->Next();
//
// Thread safety: TrainData is used by one thread (it wraps a pipeline).
#ifndef DATAECHO_EXAMPLES_TRAINER_DATA_H_
#define DATAECHO_EXAMPLES_TRAINER_DATA_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "dataecho/example.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/pipeline.h"
#include "dataecho/stats.h"
#include "trainer/trainer.h"

namespace dataecho::testing {
class HttpServer;
}  // namespace dataecho::testing

namespace trainer {

// The network: 28 x 28 pixels in, 10 classes out.
inline const std::vector<int> kLayerSizes = {784, 256, 128, 10};
// Fashion-MNIST pixel statistics (of x / 255 over the training set), used to
// standardize inputs: x' = (x / 255 - mean) / stddev.
inline constexpr float kPixelMean = 0.2860f;
inline constexpr float kPixelStddev = 0.3530f;

struct TestSet {
  std::vector<float> images;  // [size, 784], standardized
  std::vector<int64_t> labels;
  int64_t size = 0;
};

// The test set from `options.idx_dir` (first `test_limit` images if set).
absl::StatusOr<TestSet> LoadTestSet(const TrainOptions& options);

class Mlp;

// One evaluation during training: the accuracy of `model` on `test`, added to
// result->curve at result->fresh_examples_total (the first at or above
// `target_accuracy` also sets result's *_to_target fields, with
// `train_seconds`: the training time so far, evaluations excluded); the time
// it took is added to result->eval_seconds.
double Evaluate(Mlp& model, const TestSet& test, double target_accuracy, double train_seconds,
                TrainResult* result);

// The training batches, endless (epochs repeat).
class TrainData {
 public:
  virtual ~TrainData() = default;
  virtual absl::StatusOr<std::optional<dataecho::Batch>> Next() = 0;
  virtual std::vector<dataecho::StageStats> Stats() const = 0;
  // The pipeline's state between two Next() calls (Pipeline::SaveState), and
  // its restore, before the first Next() (Pipeline::RestoreState).
  virtual absl::StatusOr<std::string> SaveState() = 0;
  virtual absl::Status RestoreState(std::string_view state) = 0;
  // The loss of each row of `batch`, for the echo planner
  // (Pipeline::ReportLoss). Default: FAILED_PRECONDITION (no planner).
  virtual absl::Status ReportLoss(const dataecho::Batch& /*batch*/,
                                  std::span<const float> /*row_losses*/) {
    return absl::FailedPreconditionError("these batches have no echo planner");
  }
  // The same state as a Cord that shares the pipeline's sealed snapshot
  // (Pipeline::SaveStateCord): what a checkpoint writes, chunk by chunk.
  virtual absl::StatusOr<absl::Cord> SaveStateCord() {
    absl::StatusOr<std::string> state = SaveState();
    if (!state.ok()) return state.status();
    return absl::Cord(*std::move(state));
  }
};

// TrainData that reads `batches`. `server` (may be null) is the loopback
// server the pipeline reads from: destroyed after the pipeline.
std::unique_ptr<TrainData> PipelineTrainData(std::unique_ptr<dataecho::testing::HttpServer> server,
                                             dataecho::Pipeline<dataecho::Batch> batches);

// Everything after the upstream's Prefetch boundary as described above (echo
// at o.insert, augmentation, Shuffle, Batch, the trainer's Prefetch), over
// `upstream` (decoded examples). Seeds derive from o.seed. A finite upstream
// ends with a partial batch unless `drop_remainder`. `decode` (optional): the
// parallelism control of the upstream's decode Map, whose workers
// --insert=auto may raise (dataecho/map_parallelism.h).
dataecho::Pipeline<dataecho::Batch> EchoedTrainBatches(
    dataecho::Pipeline<dataecho::Example> upstream, const TrainOptions& options,
    bool drop_remainder = true, std::shared_ptr<dataecho::MapParallelism> decode = nullptr);

// `upstream_examples_per_second` > 0 caps the upstream (shards over HTTP);
// 0 reads at full speed.
absl::StatusOr<std::unique_ptr<TrainData>> MakeTrainData(const TrainOptions& options,
                                                         double upstream_examples_per_second);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_DATA_H_
