// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numbers>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "dataecho/augment.h"
#include "dataecho/crc32c.h"
#include "dataecho/echo_planner.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/text.h"
#include "fmt/format.h"
#include "trainer/data.h"
#include "trainer/mlp.h"
#include "trainer/train_state.h"

namespace trainer {

absl::StatusOr<EchoInsert> ParseEchoInsert(std::string_view name) {
  absl::StatusOr<EchoInsert> insert = dataecho::ParseEchoPlacement(name);
  if (insert.ok()) return insert;
  return absl::InvalidArgumentError(fmt::format(
      "--insert must be before_augment, after_augment, batch, adaptive or auto, got '{}'", name));
}

absl::Status ValidateOptions(const TrainOptions& o) {
  auto bad = [](std::string message) { return absl::InvalidArgumentError(std::move(message)); };
  // The library's bound on echo factors (echo_options.h).
  if (!(o.echo >= 1.0 && o.echo <= 1e6))
    return bad(fmt::format("echo must be in [1, 1e6], got {}", o.echo));
  if (!(o.max_echo >= 1.0 && o.max_echo <= 1e6)) {
    return bad(fmt::format("max_echo must be in [1, 1e6], got {}", o.max_echo));
  }
  if ((o.insert == EchoInsert::kAdaptive || o.insert == EchoInsert::kAuto) && o.echo != 1.0) {
    return bad(fmt::format("{} echoing takes its cap from max_echo: leave echo at 1, got {}",
                           o.insert == EchoInsert::kAuto ? "auto" : "adaptive", o.echo));
  }
  // R above 1e4 would deliver one batch per 10,000 steps: no training.
  if (!(o.upstream_ratio >= 0.0 && o.upstream_ratio <= 1e4)) {
    return bad(fmt::format("upstream_ratio must be in [0, 1e4], got {}", o.upstream_ratio));
  }
  if (o.upstream_ratio > 0 && o.train_shards.empty()) {
    return bad("upstream_ratio > 0 reads TFRecord shards over HTTP: set train_shards");
  }
  if (!(o.augment_cpu_ms >= 0 && o.augment_cpu_ms <= 1000)) {
    return bad(fmt::format("augment_cpu_ms must be in [0, 1000], got {}", o.augment_cpu_ms));
  }
  if (!(o.step_seconds >= 0 && o.step_seconds <= 60)) {
    return bad(
        fmt::format("step_seconds must be in [0, 60] (0 = measure it), got {}", o.step_seconds));
  }
  if (o.batch_size < 1 || o.shuffle_buffer < 1 || o.prefetch_depth < 1 ||
      o.decode_parallelism < 1) {
    return bad("batch_size, shuffle_buffer, prefetch_depth and decode_parallelism must be >= 1");
  }
  if (o.fresh_budget < 1 || o.eval_every < 1)
    return bad("fresh_budget and eval_every must be >= 1");
  if (o.train_limit < 0 || o.test_limit < 0) return bad("train_limit and test_limit must be >= 0");
  if (!(o.target_accuracy > 0 && o.target_accuracy <= 1)) {
    return bad(fmt::format("target_accuracy must be in (0, 1], got {}", o.target_accuracy));
  }
  // (NaN fails every comparison: each test is written to fail on it.)
  if (!(o.learning_rate > 0 && std::isfinite(o.learning_rate))) {
    return bad(fmt::format("learning_rate must be a finite number > 0, got {}", o.learning_rate));
  }
  if (!(o.momentum >= 0 && o.momentum < 1))
    return bad(fmt::format("momentum must be in [0, 1), got {}", o.momentum));
  if (!(o.weight_decay >= 0 && std::isfinite(o.weight_decay))) {
    return bad(fmt::format("weight_decay must be a finite number >= 0, got {}", o.weight_decay));
  }
  if (o.checkpoint_every < 0) {
    return bad(fmt::format("checkpoint_every must be >= 0, got {}", o.checkpoint_every));
  }
  if ((o.checkpoint_every > 0 || o.resume) && o.checkpoint_dir.empty()) {
    return bad("checkpoint_every and resume need checkpoint_dir");
  }
  if ((o.checkpoint_every > 0 || o.resume) && o.upstream_ratio > 0 && o.upstream_over_http) {
    // The shards' URIs name the loopback server's port, a new one each run:
    // a saved pipeline would not match the next run's.
    return bad(
        "checkpoints with upstream_ratio > 0 need upstream_http=false (the loopback server's "
        "port, part of the shards' URIs, changes from run to run)");
  }
  if (o.lr_schedule != "constant" && o.lr_schedule != "cosine") {
    return bad(fmt::format("lr_schedule must be constant or cosine, got '{}'", o.lr_schedule));
  }
  return absl::OkStatus();
}

namespace {

float LearningRate(const TrainOptions& o, int64_t fresh) {
  if (o.lr_schedule == "constant") return o.learning_rate;
  const double progress =
      std::min(1.0, static_cast<double>(fresh) / static_cast<double>(o.fresh_budget));
  return static_cast<float>(o.learning_rate * 0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
}

// Seconds of one training step of `model` on a batch of `rows` rows (median
// of a few, on synthetic data): what "upstream R times slower than a step"
// is measured against.
double MeasureStepSeconds(const TrainOptions& o, const TestSet& test) {
  Mlp model(kLayerSizes, o.seed);
  Sgd sgd(model, {.learning_rate = o.learning_rate, .momentum = o.momentum});
  const int rows = static_cast<int>(std::min<int64_t>(o.batch_size, test.size));
  std::vector<double> seconds;
  for (int i = 0; i < 25; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    model.ComputeGradients(test.images.data(), test.labels.data(), rows);
    sgd.Step(model);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin() + 5, seconds.end());
  return seconds[5 + (seconds.size() - 5) / 2] * o.batch_size / rows;
}

// FAILED_PRECONDITION "no records in <the training data>".
absl::Status NoTrainingData(const TrainOptions& o) {
  const std::string where =
      o.train_shards.empty() ? fmt::format("{}/train-*-ubyte.gz", o.idx_dir) : o.train_shards;
  return absl::FailedPreconditionError(
      fmt::format("no records in {}: not one batch to train on", dataecho::RedactUri(where)));
}

// Writes the checkpoint of the step just taken (in the background): the
// section "trainer" (options fingerprint, loop, model and optimizer:
// train_state.h) and the pipeline's state (its chunks as they are: the
// sealed snapshot is not copied).
absl::Status WriteTrainCheckpoint(const TrainOptions& o, dataecho::CheckpointDir& dir, Mlp& model,
                                  Sgd& sgd, const TrainResult& result, const LoopState& loop,
                                  TrainData& data) {
  absl::StatusOr<absl::Cord> pipeline = data.SaveStateCord();
  if (!pipeline.ok()) {
    return absl::Status(pipeline.status().code(),
                        fmt::format("checkpoint of step {}: the pipeline cannot save its state: {}",
                                    result.steps_total, std::string(pipeline.status().message())));
  }
  StateWriter w;
  w.String(OptionsFingerprint(o));
  SaveLoop(result, loop, w);
  SaveModel(model, sgd, w);
  return dir.Write(result.steps_total, {{std::string(kTrainerSection), absl::Cord(w.Release())},
                                        {std::string(kPipelineSection), *std::move(pipeline)}});
}

}  // namespace

namespace {

// TrainOptions::dump_fresh_indices: no file (null) without one; a new file,
// or at a resume the file cut back to the `bytes` its checkpoint counted.
absl::StatusOr<std::unique_ptr<std::FILE, int (*)(std::FILE*)>> OpenFreshDump(
    const std::string& path, bool resumed, int64_t bytes) {
  using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
  if (path.empty()) return File(nullptr, &std::fclose);
  if (resumed) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec || size < static_cast<uintmax_t>(bytes)) {
      return absl::DataLossError(
          fmt::format("dump_fresh_indices: {} has {} bytes, the checkpoint counted {}", path,
                      ec ? 0 : size, bytes));
    }
    std::filesystem::resize_file(path, static_cast<uintmax_t>(bytes), ec);
    if (ec) return absl::InternalError(fmt::format("cutting back {}: {}", path, ec.message()));
  }
  File f(std::fopen(path.c_str(), resumed ? "a" : "w"), &std::fclose);
  if (f == nullptr) return absl::InternalError(fmt::format("cannot open {}", path));
  return f;
}

// Writes the source indices of `b`'s fresh rows, one a line; the bytes written.
int64_t DumpFresh(const dataecho::Batch& b, std::FILE* out) {
  if (!b.fresh()) return 0;
  int64_t bytes = 0;
  for (int64_t i = 0; i < b.num_rows; ++i) {
    if (b.repeat_indices.data<int32_t>()[static_cast<size_t>(i)] != 0) continue;
    const std::string line =
        fmt::format("{}\n", b.source_indices.data<int64_t>()[static_cast<size_t>(i)]);
    std::fwrite(line.data(), 1, line.size(), out);
    bytes += static_cast<int64_t>(line.size());
  }
  return bytes;
}

}  // namespace

absl::StatusOr<TrainResult> Train(const TrainOptions& o, const ProgressFn& progress) {
  if (absl::Status s = ValidateOptions(o); !s.ok()) return s;
  // The directory is checked (one writer, writable) before any training.
  absl::StatusOr<std::unique_ptr<dataecho::CheckpointDir>> checkpoints =
      OpenCheckpoints(o, "fashion_mnist_trainer");
  if (!checkpoints.ok()) return checkpoints.status();
  std::optional<dataecho::Checkpoint> checkpoint;
  if (o.resume) {
    absl::StatusOr<std::optional<dataecho::Checkpoint>> newest = (*checkpoints)->ReadNewest();
    if (!newest.ok()) return newest.status();
    checkpoint = *std::move(newest);
  }
  absl::StatusOr<TestSet> test = LoadTestSet(o);
  if (!test.ok()) return test.status();

  Mlp model(kLayerSizes, o.seed);
  Sgd sgd(
      model,
      {.learning_rate = o.learning_rate, .momentum = o.momentum, .weight_decay = o.weight_decay});
  TrainResult result;
  LoopState loop{.next_eval = o.eval_every};
  // A checkpoint's sections: the trainer's (options, loop, model) now, the
  // pipeline's state once the pipeline is built.
  std::string_view pipeline_state;
  if (checkpoint) {
    absl::StatusOr<std::string_view> own = SectionOf(*checkpoint, kTrainerSection);
    absl::StatusOr<std::string_view> pipeline = SectionOf(*checkpoint, kPipelineSection);
    if (!own.ok()) return own.status();
    if (!pipeline.ok()) return pipeline.status();
    pipeline_state = *pipeline;
    StateReader reader(*own, checkpoint->path);
    if (absl::Status s = CheckFingerprint(reader, o, checkpoint->path); !s.ok()) return s;
    RestoreLoop(reader, result, loop);
    RestoreModel(reader, model, sgd);
    if (absl::Status s = reader.Finish(); !s.ok()) return s;
    result.resumed_from_step = checkpoint->step;
    result.resumed_from = checkpoint->path;
  }
  result.echo = o.echo;
  result.insert = o.insert;
  if (o.insert == EchoInsert::kAdaptive || o.insert == EchoInsert::kAuto)
    result.max_echo = o.max_echo;

  // The upstream rate: R times slower than a step means one batch of fresh
  // examples every R step times (a resumed run keeps the step time measured
  // at its start).
  double step_seconds = 0;
  double upstream_examples_per_second = 0;
  if (o.upstream_ratio > 0) {
    step_seconds = o.step_seconds > 0                      ? o.step_seconds
                   : checkpoint && result.step_seconds > 0 ? result.step_seconds
                                                           : MeasureStepSeconds(o, *test);
    upstream_examples_per_second = o.batch_size / (o.upstream_ratio * step_seconds);
  }
  absl::StatusOr<std::unique_ptr<TrainData>> data = MakeTrainData(o, upstream_examples_per_second);
  if (!data.ok()) return data.status();
  if (checkpoint) {
    if (absl::Status s = (*data)->RestoreState(pipeline_state); !s.ok()) {
      return absl::Status(s.code(), fmt::format("checkpoint {}: restoring the pipeline: {}",
                                                checkpoint->path, std::string(s.message())));
    }
  }
  // A pipeline that cannot be saved fails now, not at the first checkpoint.
  if (o.checkpoint_every > 0) {
    if (absl::StatusOr<std::string> probe = (*data)->SaveState(); !probe.ok()) {
      return absl::Status(probe.status().code(),
                          fmt::format("checkpoint_every: this pipeline cannot save its state: {}",
                                      std::string(probe.status().message())));
    }
  }
  result.step_seconds = step_seconds;
  result.upstream_examples_per_second = upstream_examples_per_second;
  absl::StatusOr<std::unique_ptr<std::FILE, int (*)(std::FILE*)>> dump =
      OpenFreshDump(o.dump_fresh_indices, checkpoint.has_value(), loop.dump_bytes);
  if (!dump.ok()) return dump.status();

  using Clock = std::chrono::steady_clock;
  double& train_seconds = loop.train_seconds;  // excludes evaluations
  Clock::time_point resumed = Clock::now();
  double& accuracy = loop.accuracy;
  auto evaluate = [&] {
    train_seconds += std::chrono::duration<double>(Clock::now() - resumed).count();
    accuracy = Evaluate(model, *test, o.target_accuracy, train_seconds, &result);
    resumed = Clock::now();
  };

  int64_t& next_eval = loop.next_eval;
  // --report_loss: only a planner (insert auto or adaptive) takes losses.
  const bool report_loss =
      o.report_loss && (o.insert == EchoInsert::kAuto || o.insert == EchoInsert::kAdaptive);
  std::vector<float> row_losses;
  while (result.fresh_examples_total < o.fresh_budget) {
    const auto asked = Clock::now();
    absl::StatusOr<std::optional<dataecho::Batch>> batch = (*data)->Next();
    result.data_wait_seconds += std::chrono::duration<double>(Clock::now() - asked).count();
    if (!batch.ok()) return batch.status();
    if (!batch->has_value()) {
      // The data repeats epoch after epoch: it ends only when an epoch is
      // empty, i.e. there is nothing to train on at all.
      if (result.steps_total == 0) return NoTrainingData(o);
      break;
    }
    const dataecho::Batch& b = **batch;
    result.data_digest = DigestBatch(result.data_digest, b);
    const int rows = static_cast<int>(b.num_rows);
    if (report_loss) row_losses.resize(static_cast<size_t>(rows));
    model.ComputeGradients(b.components[0].data<float>().data(), b.labels.data<int64_t>().data(),
                           rows, report_loss ? row_losses.data() : nullptr);
    if (report_loss) {  // the loss before this step's update, for the echo planner
      if (absl::Status s = (*data)->ReportLoss(b, row_losses); !s.ok()) return s;
    }
    sgd.Step(model, LearningRate(o, result.fresh_examples_total));
    ++result.steps_total;
    result.examples_total += rows;
    result.fresh_examples_total += b.fresh_rows;
    if (*dump != nullptr) loop.dump_bytes += DumpFresh(b, dump->get());
    const bool done = result.fresh_examples_total >= o.fresh_budget;
    if (result.fresh_examples_total >= next_eval || done) {
      evaluate();
      while (next_eval <= result.fresh_examples_total) next_eval += o.eval_every;
      if (o.stop_at_target && result.fresh_examples_to_target) break;
    }
    if (progress) progress(result.fresh_examples_total, o.fresh_budget, accuracy);
    if (o.checkpoint_every > 0 && result.steps_total % o.checkpoint_every == 0 && !done) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - resumed).count();
      LoopState saved = loop;
      saved.train_seconds += elapsed;
      // The rows the checkpoint counts are in the file (the kernel's) before it is written.
      if (*dump != nullptr && std::fflush(dump->get()) != 0) {
        return absl::InternalError(fmt::format("writing {}", o.dump_fresh_indices));
      }
      if (absl::Status s =
              WriteTrainCheckpoint(o, **checkpoints, model, sgd, result, saved, **data);
          !s.ok()) {
        return s;
      }
    }
  }
  if (result.curve.empty() || result.curve.back().fresh_examples != result.fresh_examples_total) {
    evaluate();
  }
  // The last background write, done (or its error).
  if (*checkpoints != nullptr) {
    if (absl::Status s = (*checkpoints)->Flush(); !s.ok()) return s;
  }
  result.final_test_accuracy = accuracy;
  result.seconds_total = train_seconds;
  if (o.insert == EchoInsert::kAuto) {
    for (const dataecho::StageStats& row : (*data)->Stats()) {
      if (row.name == dataecho::AutoPlacementOptions{}.name) result.decisions = row.notes;
    }
  }
  if (result.fresh_examples_total > 0) {
    result.realized_echo_factor = static_cast<double>(result.examples_total) /
                                  static_cast<double>(result.fresh_examples_total);
  }
  return result;
}

std::string UpstreamNote(const TrainResult& r) {
  if (!(r.seconds_total > 0)) return "";
  const double waited = r.data_wait_seconds / r.seconds_total;
  if (waited >= 0.05) return "";
  std::string note = fmt::format(
      "upstream is not the bottleneck here: echoing cannot help (the training loop waited for "
      "data {:.1f} % of the time)",
      100 * waited);
  if (r.realized_echo_factor > 1.0) {
    note +=
        fmt::format("; the {:.2f} rows per fresh example only repeat data", r.realized_echo_factor);
  }
  return note;
}

uint64_t DigestBatch(uint64_t digest, const dataecho::Batch& b) {
  auto crc = [](const dataecho::Tensor& t) -> uint64_t {
    return dataecho::Crc32c(t.buffer().data(), t.byte_size());
  };
  uint64_t rows = dataecho::MixSeed(crc(b.source_indices), crc(b.repeat_indices), crc(b.labels));
  for (const dataecho::Tensor& t : b.components) rows = dataecho::MixSeed(rows, crc(t));
  return dataecho::MixSeed(digest, rows, static_cast<uint64_t>(b.num_rows));
}

std::string ResultToJson(const TrainResult& r) {
  using dataecho::JsonNumber;
  auto optional_number = [](const auto& v) {
    return v ? JsonNumber(static_cast<double>(*v)) : "null";
  };
  std::string curve;
  for (const CurvePoint& p : r.curve) {
    if (!curve.empty()) curve += ", ";
    curve += fmt::format("[{}, {}]", p.fresh_examples, JsonNumber(p.test_accuracy));
  }
  std::string decisions;
  if (r.insert == EchoInsert::kAuto) {
    for (const std::string& d : r.decisions)
      decisions += (decisions.empty() ? "" : ", ") + dataecho::JsonQuote(d);
    decisions = fmt::format(", \"decisions\": [{}]", decisions);
  }
  return fmt::format(
      "{{\"echo\": {}, \"insert\": {}, \"max_echo\": {}, \"fresh_examples_to_target\": {}, "
      "\"steps_to_target\": {}, \"seconds_to_target\": {}, \"final_test_accuracy\": {}, "
      "\"fresh_examples_total\": {}, \"steps_total\": {}, \"seconds_total\": {}, "
      "\"data_wait_seconds\": {}, "
      "\"realized_echo_factor\": {}, \"data_digest\": \"{:016x}\", \"curve\": [{}]{}}}\n",
      JsonNumber(r.echo), dataecho::JsonQuote(EchoInsertName(r.insert)),
      optional_number(r.max_echo), optional_number(r.fresh_examples_to_target),
      optional_number(r.steps_to_target), optional_number(r.seconds_to_target),
      JsonNumber(r.final_test_accuracy), r.fresh_examples_total, r.steps_total,
      JsonNumber(r.seconds_total), JsonNumber(r.data_wait_seconds),
      JsonNumber(r.realized_echo_factor), r.data_digest, curve, decisions);
}

}  // namespace trainer
