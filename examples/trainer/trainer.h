// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// trainer.h: trains the example MLP on Fashion-MNIST through a dataecho
// pipeline and measures how many *fresh* examples it needs.
//
// The training data flows through the library: records are read (IDX files or
// TFRecord shards, locally or over HTTP from a throttled store), decoded,
// prefetched, echoed at the chosen insertion point, augmented (random crop with
// 2-pixel padding + horizontal flip), shuffled, batched as float32 and
// prefetched again. Test accuracy on the 10,000-image test set is measured
// every `eval_every` fresh examples; the run records when it first reaches
// `target_accuracy`.
//
//   trainer::TrainOptions options;
//   options.echo = 2.0;
//   options.insert = trainer::EchoInsert::kBeforeAugment;
//   absl::StatusOr<trainer::TrainResult> result = trainer::Train(options);
//   if (!result.ok()) return result.status();
//   std::string json = trainer::ResultToJson(*result);
//
// Thread safety: Train() may run concurrently with itself (no shared state).
#ifndef DATAECHO_EXAMPLES_TRAINER_TRAINER_H_
#define DATAECHO_EXAMPLES_TRAINER_TRAINER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/echo_placement.h"

namespace trainer {

// Where Echo sits in the pipeline: the library's placements
// (dataecho/echo_placement.h): the paper's three insertion points
// (kBeforeAugment: each copy is cropped anew; kAfterAugment: copies are
// identical; kBatch: whole batches repeated), or kAdaptive: like
// kBeforeAugment, but repeats only while the upstream has nothing ready, at
// most `max_echo` emissions per example.
using EchoInsert = dataecho::EchoPlacement;
// "before_augment", "after_augment", "batch", "adaptive".
inline std::string_view EchoInsertName(EchoInsert insert) {
  return dataecho::EchoPlacementName(insert);
}
// Parses a name above; INVALID_ARGUMENT (naming --insert) otherwise.
absl::StatusOr<EchoInsert> ParseEchoInsert(std::string_view name);

struct TrainOptions {
  // Directory with the four Fashion-MNIST IDX files (train-images-idx3-ubyte.gz, ...).
  // The test set is always read from here.
  std::string idx_dir = "/usr/share/datasets/fashion-mnist";
  // TFRecord shards for training (a glob such as "/data/fmnist/train-*.tfrecord",
  // or "" to read the IDX training files). With `upstream_ratio` > 0 they are
  // served over loopback HTTP from a throttled store.
  std::string train_shards;
  // Use only the first this many training / test examples; 0 = all.
  int64_t train_limit = 0;
  int64_t test_limit = 0;

  // Echo factor e >= 1 and where it applies. With insert = kAdaptive, `echo`
  // must stay 1 and `max_echo` (>= 1) caps the emissions of each example; the
  // pool of examples that may be repeated holds two batches.
  double echo = 1.0;
  EchoInsert insert = EchoInsert::kBeforeAugment;
  double max_echo = 4.0;
  // With insert = kAuto: what the planner optimizes (echo_planner.h).
  dataecho::EchoPrefer prefer = dataecho::EchoPrefer::kProgress;
  // With insert = kAuto (or kAdaptive): report every batch's per-row loss to
  // the planner (Pipeline::ReportLoss), which learns from it what a copy is
  // worth on this model (echo_planner.h, loss_gap_scale).
  bool report_loss = false;
  // Upstream R times slower than one training step (R > 0 needs
  // `train_shards`); 0 = read as fast as the files allow.
  double upstream_ratio = 0.0;
  // With upstream_ratio > 0: serve the shards over loopback HTTP (true), or
  // read the local files through the throttled store directly (false).
  bool upstream_over_http = true;
  // The step time R is relative to; 0 = measure it before training (a median
  // of a few steps). Set it to compare runs on a busy machine fairly.
  double step_seconds = 0.0;
  // A CPU-heavy augmentation: each augmented example also burns this much
  // CPU (its thread's CPU clock), on the pipeline's cores. 0 = none. In [0, 1000].
  double augment_cpu_ms = 0.0;

  int batch_size = 128;
  int shuffle_buffer = 2048;  // elements; follows example echoing
  // Examples buffered at the prefetch boundary before Echo. Small, so that the
  // upstream cannot bank much work while the trainer evaluates.
  int prefetch_depth = 256;
  int decode_parallelism = 1;

  // Training ends after this many fresh examples (distinct upstream reads).
  int64_t fresh_budget = 600000;
  // Test accuracy every this many fresh examples (and at the end).
  int64_t eval_every = 20000;
  double target_accuracy = 0.85;
  bool stop_at_target = false;

  // SGD with momentum. `lr_schedule`: "constant", or "cosine" (decays to 0 at
  // `fresh_budget` fresh examples: the schedule follows fresh data, not steps).
  float learning_rate = 0.02f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  std::string lr_schedule = "constant";

  // Seeds the model's initialization and every random stage.
  uint64_t seed = 1;

  // Checkpoints (dataecho/checkpoint_dir.h, train_state.h): with
  // checkpoint_every > 0, after every that many steps the model, the
  // optimizer's momentum, the loop's running values and the pipeline's state
  // are written to checkpoint_dir (atomically, in the background; the last
  // two kept). The directory is checked at the start, before any training:
  // one writer (a second run on it is refused, naming the first), writable,
  // a directory. With `resume`, training
  // continues from the newest complete checkpoint there (a damaged newest one
  // is skipped with a warning on stderr), or starts fresh if there is none; the
  // options must be those of the run that wrote it. A run resumed after being
  // killed at any point ends with the same data_digest and final accuracy as
  // one never interrupted. (With upstream_ratio > 0 it needs
  // upstream_over_http = false: the loopback server's port changes per run.)
  // With insert = auto the placement's decisions depend on timing: a resumed
  // run replays those its pipeline state carries (the batches in flight at
  // the checkpoint), then decides afresh, so it trains every fresh example
  // of an epoch exactly once across the kills, but its data_digest is an
  // uninterrupted run's only up to the first decision after the resume.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool resume = false;
  // A file: the source index of each fresh row trained (a fresh batch's rows
  // with repeat index 0), one a line, in training order. A resumed run cuts
  // it back to what its checkpoint counted, so it shows what the model was
  // trained on across kills.
  std::string dump_fresh_indices;
};

// One evaluation: fresh examples seen so far and test accuracy.
struct CurvePoint {
  int64_t fresh_examples = 0;
  double test_accuracy = 0.0;
};

struct TrainResult {
  double echo = 1.0;
  EchoInsert insert = EchoInsert::kBeforeAugment;
  std::optional<double> max_echo;  // set for kAdaptive
  // First evaluation at or above the target; nullopt if never reached.
  std::optional<int64_t> fresh_examples_to_target;
  std::optional<int64_t> steps_to_target;
  std::optional<double> seconds_to_target;  // training wall clock, evaluations excluded
  double final_test_accuracy = 0.0;
  int64_t fresh_examples_total = 0;
  int64_t steps_total = 0;
  int64_t examples_total = 0;  // rows trained on, repeats included
  // examples_total / fresh_examples_total: (fresh + repeats) / fresh as the
  // model saw them, for every insertion point (0 if nothing was trained).
  double realized_echo_factor = 0.0;
  // A 64-bit hash over every batch the model consumed, in order: each batch's
  // rows' source and repeat indices, labels and bytes (JSON "data_digest", 16
  // hex digits), so that two runs can be compared exactly.
  uint64_t data_digest = 0;
  double seconds_total = 0.0;  // training wall clock, evaluations excluded
  double eval_seconds = 0.0;
  // Of seconds_total, the time the training loop waited for its next batch:
  // close to seconds_total when the upstream is the bottleneck.
  double data_wait_seconds = 0.0;
  // With upstream_ratio > 0: the measured step time and the upstream cap.
  double step_seconds = 0.0;
  double upstream_examples_per_second = 0.0;
  std::vector<CurvePoint> curve;
  // With insert = kAuto: the planner's decisions, each with its reason, in
  // order (dataecho/echo_planner.h; the "echo_planner" stats row's notes).
  std::vector<std::string> decisions;
  // With TrainOptions::resume: the checkpoint the run continued from (its path
  // and step); nullopt when it started fresh. Not part of the JSON.
  std::optional<int64_t> resumed_from_step;
  std::string resumed_from;
};

// Progress reports: called after every step with fresh examples so far, the
// budget, and the latest test accuracy (negative before the first evaluation).
using ProgressFn = std::function<void(int64_t fresh, int64_t budget, double accuracy)>;

// OK, or INVALID_ARGUMENT naming the first option whose value means nothing
// (a learning rate that is not a finite number > 0, a target accuracy
// outside (0, 1], ...). Train() checks it first; a program can check its
// flags with it before anything is read.
absl::Status ValidateOptions(const TrainOptions& options);

// Runs one training as `options` says. INVALID_ARGUMENT for bad options,
// FAILED_PRECONDITION "no records in ..." when the training data is empty,
// otherwise whatever reading the data returns.
absl::StatusOr<TrainResult> Train(const TrainOptions& options, const ProgressFn& progress = {});

// One line when the training loop waited for data less than 5 % of its
// training time: the upstream is not the bottleneck, so echoing cannot make
// training faster ("upstream is not the bottleneck here: echoing cannot help
// ..."). Empty otherwise (or before any training time was measured).
std::string UpstreamNote(const TrainResult& result);

// The result as one JSON object with exactly the fields
// {"echo", "insert", "max_echo", "fresh_examples_to_target", "steps_to_target",
//  "seconds_to_target", "final_test_accuracy", "fresh_examples_total",
//  "steps_total", "seconds_total", "data_wait_seconds", "realized_echo_factor",
//  "data_digest", "curve"}, and with insert = kAuto also "decisions" (an
// array of strings: TrainResult::decisions) (values not reached, and
// max_echo of a fixed factor, are null; curve = [[fresh_examples,
// test_accuracy], ...]).
std::string ResultToJson(const TrainResult& result);

// TrainResult::data_digest after one more batch `b`: `digest` folded with
// CRC-32Cs of b's source indices, repeat indices, labels and components.
uint64_t DigestBatch(uint64_t digest, const dataecho::Batch& b);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_TRAINER_H_
