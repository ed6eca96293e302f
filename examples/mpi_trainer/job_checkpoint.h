// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// job_checkpoint.h: the MPI trainer's checkpoints. Every --checkpoint_every
// steps all ranks call WriteJobCheckpoint (a collective): they OR their trained
// flags of the epochs in flight (elastic.h), gather their counts, dump sizes,
// digests and, when every rank's pipeline can save one, their pipeline states;
// rank 0 writes one checkpoint file (dataecho/checkpoint_dir.h: its section
// "trainer"). A resumed job (any world size) reads it with ParseCheckpoint on
// every rank.
//
// Payload: the trainer's options fingerprint, the job's (JobFingerprint), the
// epochs' resume (elastic::Save), the world size, per-rank fresh rows, rows,
// dump sizes and digests, then [the run's start, its trained flags and every
// rank's pipeline state] if all could save one, the loop (SaveLoop) and the
// model (SaveModel).
//
//   RankRunning running;  ... each step: running.fresh += ...
//   WriteJobCheckpoint(job, mode, rank, world, model, sgd, r, loop, tracker,
//                      running, data, dump, old_dump_sizes);
//   Restored restored;
//   ParseCheckpoint(payload, path, job, mode, &job.start, &restored);
//
// Thread safety: called by one thread per rank.
#ifndef DATAECHO_EXAMPLES_MPI_TRAINER_JOB_CHECKPOINT_H_
#define DATAECHO_EXAMPLES_MPI_TRAINER_JOB_CHECKPOINT_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mpi_trainer/elastic.h"
#include "mpi_trainer/step.h"
#include "trainer/data.h"
#include "trainer/mlp.h"
#include "trainer/train_state.h"

namespace step {

// A rank's running values that go into a checkpoint.
struct RankRunning {
  int64_t fresh = 0, rows = 0;
  uint64_t digest = 0;  // trainer::DigestBatch over this rank's batches
};

// What a checkpoint of the job holds after its fingerprints and JobResume
// (read by main.cc to build the ranks' data), read by Train().
struct Restored {
  std::string path;
  int world = 0;  // the world size of the run that wrote it
  std::vector<uint64_t> fresh_per_rank, rows_per_rank, dump_sizes, digests;
  trainer::TrainResult train;
  trainer::LoopState loop;
  std::string model;  // SaveModel's bytes
  // Set when every rank's pipeline could save its state: the run's starting
  // point, the job's trained flags of its epochs (elastic::Tracker) and each
  // rank's pipeline state. A resume at the same world size continues that run
  // exactly (the same batches as a job never stopped).
  bool has_pipelines = false;
  elastic::JobResume run_start;
  std::vector<std::string> trained;
  std::vector<std::string> pipelines;
  // Set by the caller: this resume continues the run (has_pipelines, and the
  // same world size); otherwise the epochs are re-planned.
  bool continues_run = false;
};

// "shard_mode=...;epochs=...": the job's own options that a resumed run must share.
std::string JobFingerprint(const JobOptions& job, std::string_view shard_mode);

// Parses a checkpoint payload (all ranks get the same): checks both
// fingerprints, then fills `start` and `restored`.
absl::Status ParseCheckpoint(std::string_view payload, const std::string& path,
                             const JobOptions& job, std::string_view shard_mode,
                             elastic::JobResume* start, Restored* restored);

// The checkpoint of the step just taken (a collective: every rank calls it).
// The ranks OR their trained flags of the epochs in flight; rank 0 works out
// where the epochs stand (elastic::Advance) and writes the file, with every
// rank's pipeline state when all could save one.
absl::Status WriteJobCheckpoint(const JobOptions& job, std::string_view shard_mode, int rank,
                                int world, trainer::Mlp& model, trainer::Sgd& sgd,
                                const trainer::TrainResult& r, const trainer::LoopState& loop,
                                const elastic::Tracker& tracker, const RankRunning& running,
                                trainer::TrainData& data, std::FILE* dump,
                                const std::vector<uint64_t>& old_dump_sizes);

// Opens this rank's dump of fresh rows: new, or (resuming) cut back to what
// the checkpoint counted and appended to. Rank 0 also cuts back the files of
// ranks the resumed run does not have.
absl::StatusOr<std::FILE*> OpenDump(const JobOptions& job, int rank, int world,
                                    const Restored* restored);

}  // namespace step

#endif  // DATAECHO_EXAMPLES_MPI_TRAINER_JOB_CHECKPOINT_H_
