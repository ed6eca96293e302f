// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// step.h: the data-parallel training loop of the MPI trainer.
//
// Each step every rank computes the mean gradient of its batch, scales it by
// its row count and packs every layer's gradients, its rows and its fresh rows
// into one float32 buffer; one MPI_Allreduce (sum) over that buffer gives the
// job's gradient sum and counts, and every rank applies the same SGD step with
// gradient = sum / job rows. A rank whose data ended contributes zero rows; the
// loop ends when no rank has rows (finite epochs) or when the job's fresh rows
// reach the budget (the same decision on every rank: it is taken on reduced
// counts). Rank 0 evaluates test accuracy. With checkpoints, every
// checkpoint_every steps the ranks write one together (job_checkpoint.h); a
// resumed job starts from what Restored holds.
//
//   absl::StatusOr<step::JobResult> r = step::Train(job, rank, world, *batches);
//
// Thread safety: Train() is called by one thread per rank, on every rank.
#ifndef DATAECHO_EXAMPLES_MPI_TRAINER_STEP_H_
#define DATAECHO_EXAMPLES_MPI_TRAINER_STEP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/checkpoint_dir.h"
#include "dataecho/storage/epoch_plan.h"
#include "mpi_trainer/elastic.h"
#include "mpi_trainer/rank_data.h"
#include "trainer/data.h"
#include "trainer/train_state.h"
#include "trainer/trainer.h"

namespace step {

struct JobOptions {
  trainer::TrainOptions train;  // model, optimizer, budget, evaluation (seed: the model's)
  int64_t epochs = 0;           // > 0: train on exactly this many epochs
  std::string dump_dir;         // non-empty: write DIR/rank-<r>.txt (see main.cc)
  double index_seconds = 0;     // time to index the shards and share the indexes

  // Checkpoints (train.checkpoint_dir, train.checkpoint_every): every that
  // many steps rank 0 writes the model, the optimizer, the loop's values, the
  // per-rank counts and dump sizes, and where the epochs stand (elastic.h:
  // gathered from every rank), so that a job resumed on any number of ranks
  // trains each record of an epoch exactly once.
  std::vector<uint64_t> counts;     // records per shard
  dataecho::EpochPlanOptions plan;  // the job's epoch plan
  elastic::JobResume start;         // where this run starts (empty: fresh)
  // Rank 0: the directory the checkpoints go to (trainer::OpenCheckpoints).
  dataecho::CheckpointDir* checkpoints = nullptr;
  // This rank's ranges (rank_data::MakeRankData): where a row comes from.
  std::vector<rank_data::RowOrigin> layout;
  // > 0: stop after this many steps (counted over resumes), as a job that is
  // preempted there would; the result is written as usual.
  int64_t stop_after_steps = 0;
  // > 0: after this run's N-th checkpoint every rank waits, doing nothing,
  // until it is killed: a test that kills the job can then never see it end
  // before the kill (tests/mpi/sigkill_resume.sh).
  int64_t hold_after_checkpoints = 0;
};

struct Restored;  // job_checkpoint.h

struct JobResult {
  trainer::TrainResult train;           // job-wide counts; accuracy and curve from rank 0
  std::vector<int64_t> fresh_per_rank;  // rank 0 only: fresh rows each rank trained on
  std::vector<int64_t> rows_per_rank;   // rank 0 only: rows (repeats included)
  double allreduce_seconds = 0;         // this rank's time in MPI_Allreduce
  int64_t fused_floats = 0;             // floats reduced per step
  bool models_identical = true;         // every rank ended with the same weights
};

// Runs the loop on this rank (every rank must call it).
// `restored`: the checkpoint the job resumes from, or null.
absl::StatusOr<JobResult> Train(const JobOptions& job, int rank, int world,
                                trainer::TrainData& data, const Restored* restored = nullptr,
                                std::string_view shard_mode = "records");

// trainer::ResultToJson's fields plus "ranks", "batch_size_per_rank",
// "global_batch_size", "shard_mode", "epochs", "fresh_examples_per_rank",
// "rows_per_rank", "allreduce_seconds", "fused_floats", "index_seconds",
// "models_identical".
std::string ResultToJson(const JobResult& result, const JobOptions& job, int world,
                         std::string_view shard_mode);

}  // namespace step

#endif  // DATAECHO_EXAMPLES_MPI_TRAINER_STEP_H_
