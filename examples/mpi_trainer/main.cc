// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// mpi_trainer: the example trainer's Fashion-MNIST MLP (examples/trainer),
// trained data-parallel over MPI. Every rank runs its own dataecho pipeline
// over its slice of the TFRecord shards (the epoch plan of
// dataecho/storage/epoch_plan.h: a seeded order per epoch, whole shards or
// record ranges per rank), echoes before augmentation, shuffles and batches;
// the gradients of a step are averaged with one MPI_Allreduce on one fused
// float32 buffer (every layer's gradients, plus the step's row and fresh-row
// counts: one reduction per step, not one per layer).
//
//   dataecho convert --images=.../train-images-idx3-ubyte.gz
//       --labels=.../train-labels-idx1-ubyte.gz --output=/tmp/fmnist/train --shards=8
//   mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/mpi_trainer
//       --train_shards='/tmp/fmnist/train-*' --batch_size=32 --echo=2 --json=/tmp/r.json
//   # check from outside that every record of each epoch was trained on once:
//   mpirun ... mpi_trainer --train_shards=... --epochs=2 --dump_fresh_indices=/tmp/dump
//   # checkpoints every 20 steps; resumed on 3 ranks, every record of the
//   # interrupted epoch is still trained on exactly once
//   mpirun ... -np 4 mpi_trainer ... --checkpoint_dir=/tmp/ck --checkpoint_every=20
//   mpirun ... -np 3 mpi_trainer ... --checkpoint_dir=/tmp/ck --checkpoint_every=20 --resume
//
// The gradient of a step is the mean over the rows of all ranks (each rank's
// mean gradient weighted by its rows), so 4 ranks x 32 rows train like one
// process at 128. See docs/results.md ("Data-parallel on MPI").
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/text.h"
#include "dataecho/trace.h"
#include "fmt/format.h"
#include "mpi_trainer/job_checkpoint.h"
#include "mpi_trainer/rank_data.h"
#include "mpi_trainer/step.h"
#include "trainer/flags.h"
#include "trainer/train_state.h"
#include "trainer/trainer.h"

ABSL_FLAG(std::string, shard_mode, "records",
          "records: each rank reads a contiguous record range of the epoch's order (balanced to "
          "one record); files: whole shards (balanced to one shard)");
ABSL_FLAG(int, batch_size, 32, "Rows per batch on each rank (global batch = ranks x this)");
ABSL_FLAG(int64_t, epochs, 0,
          "Read exactly this many epochs, then stop once every rank is done (0: --fresh_budget)");
ABSL_FLAG(double, latency_ms, 0,
          "Serve the shards over loopback HTTP with this latency per request (0: local files)");
ABSL_FLAG(std::string, json, "", "Rank 0 writes the result as JSON to this file");
ABSL_FLAG(std::string, trace, "",
          "Write a timeline of each rank's run (Chrome trace-event JSON: ui.perfetto.dev): "
          "FILE on one rank, FILE.rank<r> on several");
ABSL_FLAG(int64_t, stop_after_steps, 0,
          "Stop after N steps (counted over resumes), as a preempted job would (0 = never)");
ABSL_FLAG(int64_t, hold_after_checkpoints, 0,
          "After this run's Nth checkpoint, wait to be killed (for tests that kill the job; "
          "0 = never)");
ABSL_FLAG(std::string, dump_fresh_indices, "",
          "Directory: rank r writes DIR/rank-<r>.txt, one '<epoch> <source_index>' line per "
          "fresh row it trained on");

namespace {

[[noreturn]] void Fail(int rank, const absl::Status& status) {
  std::fprintf(stderr, "mpi_trainer rank %d: %s\n", rank,
               dataecho::TerminalSafe(status.ToString()).c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // not reached
}

// SplitMix64 steps over (seed, rank + 1): a seed of its own for each rank.
uint64_t RankSeed(uint64_t seed, int rank) {
  auto mix = [](uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  uint64_t s = seed;
  uint64_t h = mix(s);
  s = h ^ (static_cast<uint64_t>(rank) + 1);
  h = mix(s);
  s = h;  // the third value of the mix is 0
  return mix(s);
}

// Rank 0 indexes the shards (reading each once) and
// broadcasts the offsets; every rank gets the same indexes.
std::vector<dataecho::TFRecordIndex> SharedIndexes(int rank, const std::vector<std::string>& uris,
                                                   double* seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> flat;
  if (rank == 0) {
    absl::StatusOr<std::vector<dataecho::TFRecordIndex>> indexes = rank_data::IndexShards(uris);
    if (!indexes.ok()) Fail(rank, indexes.status());
    flat = rank_data::FlattenIndexes(*indexes);
  }
  uint64_t size = flat.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  flat.resize(size);
  MPI_Bcast(flat.data(), static_cast<int>(size), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  absl::StatusOr<std::vector<dataecho::TFRecordIndex>> indexes = rank_data::UnflattenIndexes(flat);
  if (!indexes.ok()) Fail(rank, indexes.status());
  if (indexes->size() != uris.size()) {
    Fail(rank, absl::FailedPreconditionError("ranks see different shard lists"));
  }
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return *std::move(indexes);
}

// Rank 0 reads the newest checkpoint of `dir` and sends it to every rank:
// {payload, path}, or nullopt when there is none.
std::optional<std::pair<std::string, std::string>> SharedCheckpoint(
    int rank, const dataecho::CheckpointDir* dir) {
  std::string payload, path;
  uint64_t sizes[2] = {UINT64_MAX, 0};
  if (rank == 0) {
    absl::StatusOr<std::optional<dataecho::Checkpoint>> newest = dir->ReadNewest();
    if (!newest.ok()) Fail(rank, newest.status());
    if (newest->has_value()) {
      absl::StatusOr<std::string_view> own = trainer::SectionOf(**newest, trainer::kTrainerSection);
      if (!own.ok()) Fail(rank, own.status());
      payload = std::string(*own);
      path = std::move((*newest)->path);
      sizes[0] = payload.size();
      sizes[1] = path.size();
    }
  }
  MPI_Bcast(sizes, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (sizes[0] == UINT64_MAX) return std::nullopt;
  payload.resize(sizes[0]);
  path.resize(sizes[1]);
  MPI_Bcast(payload.data(), static_cast<int>(sizes[0]), MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Bcast(path.data(), static_cast<int>(sizes[1]), MPI_CHAR, 0, MPI_COMM_WORLD);
  return std::make_pair(std::move(payload), std::move(path));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  absl::SetProgramUsageMessage("Trains the Fashion-MNIST MLP data-parallel over MPI.");
  // --help lists the flags defined in this program's files and the shared
  // ones. (Abseil's default lists those of a file named after the program,
  // mpi_trainer.cc, only; the flags are in main.cc and trainer/flags.cc, and
  // --help would print "No flags matched".)
  trainer::ListFlagsInHelp("mpi_trainer/");
  absl::ParseCommandLine(argc, argv);

  step::JobOptions job;
  absl::StatusOr<trainer::TrainOptions> flags = trainer::TrainOptionsFromFlags();
  if (!flags.ok()) Fail(rank, flags.status());
  job.train = *std::move(flags);
  trainer::TrainOptions& t = job.train;
  t.batch_size = absl::GetFlag(FLAGS_batch_size);
  job.epochs = absl::GetFlag(FLAGS_epochs);
  job.stop_after_steps = absl::GetFlag(FLAGS_stop_after_steps);
  job.hold_after_checkpoints = absl::GetFlag(FLAGS_hold_after_checkpoints);
  job.dump_dir = absl::GetFlag(FLAGS_dump_fresh_indices);
  absl::StatusOr<dataecho::ShardMode> mode =
      dataecho::ParseShardMode(absl::GetFlag(FLAGS_shard_mode));
  if (!mode.ok()) Fail(rank, mode.status());
  if (t.train_shards.empty()) Fail(rank, absl::InvalidArgumentError("--train_shards is required"));
  if (t.batch_size < 1 || t.fresh_budget < 1 || t.eval_every < 1 || job.epochs < 0 ||
      t.checkpoint_every < 0 || job.stop_after_steps < 0 || job.hold_after_checkpoints < 0) {
    Fail(rank, absl::InvalidArgumentError(
                   "--batch_size, --fresh_budget and --eval_every must be >= 1, --epochs, "
                   "--checkpoint_every, --stop_after_steps and --hold_after_checkpoints >= 0"));
  }
  if ((t.checkpoint_every > 0 || t.resume) && t.checkpoint_dir.empty()) {
    Fail(rank, absl::InvalidArgumentError("--checkpoint_every and --resume need --checkpoint_dir"));
  }

  std::unique_ptr<dataecho::ObjectStore> local = dataecho::OpenObjectStore();
  // Rank 0 writes the checkpoints: the directory is checked (one writer,
  // writable) before any work.
  std::unique_ptr<dataecho::CheckpointDir> checkpoints;
  if (rank == 0) {
    absl::StatusOr<std::unique_ptr<dataecho::CheckpointDir>> dir =
        trainer::OpenCheckpoints(t, "mpi_trainer");
    if (!dir.ok()) Fail(rank, dir.status());
    checkpoints = *std::move(dir);
    job.checkpoints = checkpoints.get();
  }
  absl::StatusOr<std::vector<std::string>> uris = dataecho::ExpandUris(*local, t.train_shards);
  if (!uris.ok()) Fail(rank, uris.status());
  rank_data::RankDataOptions data;
  data.indexes = std::make_shared<const std::vector<dataecho::TFRecordIndex>>(
      SharedIndexes(rank, *uris, &job.index_seconds));
  for (const dataecho::TFRecordIndex& index : *data.indexes) data.counts.push_back(index.records());
  data.uris = *uris;
  data.plan = {.seed = t.seed, .mode = *mode};
  data.rank = rank;
  data.world_size = world;
  data.epochs = job.epochs;
  data.latency_ms = absl::GetFlag(FLAGS_latency_ms);
  job.counts = data.counts;
  job.plan = data.plan;
  const std::string_view shard_mode = dataecho::ShardModeName(*mode);
  std::optional<step::Restored> restored;
  if (t.resume) {
    if (auto checkpoint = SharedCheckpoint(rank, checkpoints.get())) {
      restored.emplace();
      absl::Status s = step::ParseCheckpoint(checkpoint->first, checkpoint->second, job, shard_mode,
                                             &job.start, &*restored);
      if (!s.ok()) Fail(rank, s);
      // The same world size and every rank's pipeline state: continue the
      // run exactly; otherwise re-plan the epochs' rest over these ranks.
      // (Not with --latency_ms: the shards' URIs name the loopback server's
      // port, a new one each run, so the saved pipelines would not match.)
      restored->continues_run =
          restored->has_pipelines && restored->world == world && data.latency_ms == 0;
      if (restored->continues_run) job.start = restored->run_start;
      if (rank == 0) {
        std::fprintf(stderr, "resumed from %s (step %lld, written by %d ranks, now %d; %s)\n",
                     dataecho::TerminalSafe(restored->path).c_str(),
                     static_cast<long long>(restored->train.steps_total), restored->world, world,
                     restored->continues_run ? "the ranks' pipelines restored"
                                             : "the epochs' rest re-planned");
      }
    }
  }
  data.resume = job.start;
  data.train = t;
  // Each rank's echo, augmentation and shuffle draw from their own seed; the
  // model and the plan use t.seed.
  data.train.seed = RankSeed(t.seed, rank);
  absl::StatusOr<std::unique_ptr<trainer::TrainData>> batches =
      rank_data::MakeRankData(data, &job.layout);
  if (!batches.ok()) Fail(rank, batches.status());

  const std::string trace = absl::GetFlag(FLAGS_trace);
  if (!trace.empty()) {
    const std::string path = world == 1 ? trace : fmt::format("{}.rank{}", trace, rank);
    if (absl::Status s = dataecho::StartTrace(path); !s.ok()) Fail(rank, s);
  }
  absl::StatusOr<step::JobResult> result =
      step::Train(job, rank, world, **batches, restored ? &*restored : nullptr, shard_mode);
  if (!trace.empty()) {
    if (absl::Status s = dataecho::StopTrace(); !s.ok()) Fail(rank, s);
  }
  if (!result.ok()) Fail(rank, result.status());
  if (checkpoints != nullptr) {
    if (absl::Status s = checkpoints->Flush(); !s.ok()) Fail(rank, s);
  }
  if (rank == 0) {
    const trainer::TrainResult& r = result->train;
    std::printf(
        "%d ranks x batch %d (%s shards): final test accuracy %.4f after %lld fresh examples, "
        "%lld steps, %.1f s (allreduce %.1f s, waited for data %.1f s on rank 0)\n",
        world, t.batch_size, std::string(dataecho::ShardModeName(*mode)).c_str(),
        r.final_test_accuracy, static_cast<long long>(r.fresh_examples_total),
        static_cast<long long>(r.steps_total), r.seconds_total, result->allreduce_seconds,
        r.data_wait_seconds);
    const std::string json_path = absl::GetFlag(FLAGS_json);
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << step::ResultToJson(*result, job, world, dataecho::ShardModeName(*mode));
      if (!out.good()) Fail(rank, absl::UnavailableError("cannot write " + json_path));
    }
  }
  batches->reset();
  MPI_Finalize();
  return 0;
}
