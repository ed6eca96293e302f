// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// train_state.h: what the trainers' checkpoints hold, as bytes: the model's
// weights and biases, the optimizer's momentum, the training loop's running
// values (steps, rows, fresh rows, data digest, next evaluation, the accuracy
// curve and the target reached, times), and a fingerprint of the options that
// change a run. The pipeline's own state (Pipeline::SaveState) and what is
// particular to one trainer are appended by the trainer with the same writer.
// The bytes go into a checkpoint file (dataecho/checkpoint_dir.h: the
// section "trainer", beside the pipeline's "pipeline"), which checks them with
// a CRC; the reader here still checks every length, so a payload of another
// layout is an error, never a crash. OpenCheckpoints() opens the trainers'
// --checkpoint_dir the one way both trainers do.
//
//   trainer::StateWriter w;
//   w.String(trainer::OptionsFingerprint(options));
//   trainer::SaveModel(model, sgd, w);
//   trainer::SaveLoop(result, loop, w);
//   ...
//   trainer::StateReader r(payload, path);
//   if (absl::Status s = trainer::CheckFingerprint(r, options, path); !s.ok()) ...
//   trainer::RestoreModel(r, model, sgd); trainer::RestoreLoop(r, result, loop);
//   if (!r.status().ok()) ...
//
// Thread safety: none (plain values).
#ifndef DATAECHO_EXAMPLES_TRAINER_TRAIN_STATE_H_
#define DATAECHO_EXAMPLES_TRAINER_TRAIN_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint_dir.h"
#include "trainer/mlp.h"
#include "trainer/trainer.h"

namespace trainer {

// Little-endian fixed-width values, length-prefixed strings and vectors.
class StateWriter {
 public:
  void U64(uint64_t v);
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v);
  void String(std::string_view s);
  void Floats(const std::vector<float>& v);
  void U64s(const std::vector<uint64_t>& v);
  // A list: its size, then write_one(item) for each item.
  template <typename T, typename F>
  void List(const std::vector<T>& items, F write_one) {
    U64(items.size());
    for (const T& item : items) write_one(item);
  }
  const std::string& bytes() const { return out_; }
  std::string Release() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what StateWriter wrote. The first value that does not fit makes
// status() DATA_LOSS naming `source` and the offset; later reads return 0 /
// empty values.
class StateReader {
 public:
  StateReader(std::string_view bytes, std::string source)
      : in_(bytes), source_(std::move(source)) {}
  uint64_t U64();
  int64_t I64() { return static_cast<int64_t>(U64()); }
  double F64();
  std::string String();
  // A vector of exactly `expected` floats (DATA_LOSS otherwise).
  std::vector<float> Floats(size_t expected);
  std::vector<uint64_t> U64s(size_t max_size);
  // A list StateWriter::List wrote: read_one() once per item while the
  // reads succeed. More than `max_size` items fails with "<n> <what>".
  template <typename F>
  void List(uint64_t max_size, std::string_view what, F read_one) {
    const uint64_t n = U64();
    if (status().ok() && n > max_size) Fail(std::to_string(n) + " " + std::string(what));
    for (uint64_t i = 0; i < n && status().ok(); ++i) read_one();
  }
  // Every byte not read yet.
  std::string Rest();
  // DATA_LOSS if a read failed or bytes are left over.
  absl::Status Finish();
  const absl::Status& status() const { return status_; }
  void Fail(std::string_view why);

 private:
  bool Need(size_t n);
  std::string_view in_;
  size_t at_ = 0;
  std::string source_;
  absl::Status status_;
};

// The running values of a training loop besides TrainResult.
struct LoopState {
  int64_t next_eval = 0;
  double accuracy = -1;      // the latest evaluation, -1 before the first
  double train_seconds = 0;  // training time so far, evaluations excluded
  int64_t dump_bytes = 0;    // written to TrainOptions::dump_fresh_indices so far
};

// "name=value;..." of every option that changes what a run computes (seed,
// echo, insert, batch, shuffle, budget, evaluation, optimizer, data).
std::string OptionsFingerprint(const TrainOptions& options);
// Reads the fingerprint; FAILED_PRECONDITION naming `path` and the first
// option that differs when it is not `options`' one.
absl::Status CheckFingerprint(StateReader& r, const TrainOptions& options, std::string_view path);

void SaveModel(Mlp& model, Sgd& sgd, StateWriter& w);
// Shapes must match the model's (DATA_LOSS in the reader otherwise).
void RestoreModel(StateReader& r, Mlp& model, Sgd& sgd);

void SaveLoop(const TrainResult& result, const LoopState& loop, StateWriter& w);
void RestoreLoop(StateReader& r, TrainResult& result, LoopState& loop);

// The section of a trainer's checkpoint that holds what this file writes (the
// pipeline's state is the section "pipeline").
inline constexpr std::string_view kTrainerSection = "trainer";
inline constexpr std::string_view kPipelineSection = "pipeline";

// The checkpoint directory of `options`, checked before any training: with
// checkpoint_every > 0 opened for writing (this process its one writer, the
// directory writable; checkpoints written in the background, the newest two
// kept), else with `resume` opened for reading; nullptr without either.
// Warnings (damaged checkpoints skipped) go to stderr after `program`.
absl::StatusOr<std::unique_ptr<dataecho::CheckpointDir>> OpenCheckpoints(
    const TrainOptions& options, std::string_view program);

// The section `name` of `checkpoint`: DATA_LOSS naming the file if it has none.
absl::StatusOr<std::string_view> SectionOf(const dataecho::Checkpoint& checkpoint,
                                           std::string_view name);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_TRAIN_STATE_H_
