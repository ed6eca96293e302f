// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "mpi_trainer/job_checkpoint.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "fmt/format.h"

namespace step {
namespace {

// Gathers each rank's `bytes` on rank 0 (in rank order).
std::vector<std::string> GatherStrings(int rank, int world, const std::string& bytes) {
  int size = static_cast<int>(bytes.size());
  std::vector<int> sizes(static_cast<size_t>(world)), displacements(static_cast<size_t>(world));
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank == 0) {
    int at = 0;
    for (int i = 0; i < world; ++i) {
      displacements[i] = at;
      at += sizes[i];
    }
    all.resize(static_cast<size_t>(at));
  }
  MPI_Gatherv(bytes.data(), size, MPI_CHAR, all.data(), sizes.data(), displacements.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0) {
    for (int i = 0; i < world; ++i) out.push_back(all.substr(displacements[i], sizes[i]));
  }
  return out;
}

}  // namespace

// The checkpoint of the step just taken (a collective: every rank calls it).
// The ranks OR their trained flags of the epochs in flight; rank 0 works out
// where the epochs stand (elastic::Advance) and writes the file, with every
// rank's pipeline state when all could save one.
absl::Status WriteJobCheckpoint(const JobOptions& job, std::string_view shard_mode, int rank,
                                int world, trainer::Mlp& model, trainer::Sgd& sgd,
                                const trainer::TrainResult& r, const trainer::LoopState& loop,
                                const elastic::Tracker& tracker, const RankRunning& running,
                                trainer::TrainData& data, std::FILE* dump,
                                const std::vector<uint64_t>& old_dump_sizes) {
  int64_t last = tracker.last_epoch();
  if (!job.start.epochs.empty()) {
    last = std::max(last, static_cast<int64_t>(job.start.epochs.back().progress.epoch));
  }
  MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> trained;
  for (int64_t k = static_cast<int64_t>(job.start.first_epoch); k <= last; ++k) {
    std::vector<uint8_t> bytes = tracker.Bytes(static_cast<uint64_t>(k));
    MPI_Allreduce(MPI_IN_PLACE, bytes.data(), static_cast<int>(bytes.size()), MPI_UNSIGNED_CHAR,
                  MPI_BOR, MPI_COMM_WORLD);
    trained.push_back(std::move(bytes));
  }
  int64_t dump_size = 0;
  if (dump != nullptr) {
    if (std::fflush(dump) != 0) return absl::UnavailableError("cannot write the fresh indices");
    dump_size = std::ftell(dump);
  }
  const int64_t mine[4] = {running.fresh, running.rows, dump_size,
                           static_cast<int64_t>(running.digest)};
  std::vector<int64_t> all(4 * static_cast<size_t>(world));
  MPI_Gather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
  // The pipelines' states, if every rank's pipeline can save one (until then
  // a resume re-plans the epochs at any world size).
  absl::StatusOr<std::string> pipeline = data.SaveState();
  int saved_all = pipeline.ok() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &saved_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::vector<std::string> pipelines;
  if (saved_all) pipelines = GatherStrings(rank, world, *pipeline);
  if (rank != 0) return absl::OkStatus();
  absl::StatusOr<elastic::JobResume> next =
      elastic::Advance(job.counts, job.plan, job.start, world, trained);
  if (!next.ok()) return next.status();
  trainer::StateWriter w;
  w.String(trainer::OptionsFingerprint(job.train));
  w.String(JobFingerprint(job, shard_mode));
  elastic::Save(*next, w);
  w.U64(static_cast<uint64_t>(world));
  std::vector<uint64_t> fresh, rows, digests;
  std::vector<uint64_t> dumps = old_dump_sizes;
  dumps.resize(std::max(dumps.size(), static_cast<size_t>(world)), 0);
  for (int i = 0; i < world; ++i) {
    fresh.push_back(static_cast<uint64_t>(all[4 * i]));
    rows.push_back(static_cast<uint64_t>(all[4 * i + 1]));
    dumps[i] = static_cast<uint64_t>(all[4 * i + 2]);
    digests.push_back(static_cast<uint64_t>(all[4 * i + 3]));
  }
  w.U64s(fresh);
  w.U64s(rows);
  w.U64s(dumps);
  w.U64s(digests);
  w.U64(saved_all ? 1 : 0);
  if (saved_all) {
    elastic::Save(job.start, w);
    w.U64(trained.size());
    for (const std::vector<uint8_t>& bytes : trained) {
      w.String(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    }
    for (const std::string& state : pipelines) w.String(state);
  }
  trainer::SaveLoop(r, loop, w);
  trainer::SaveModel(model, sgd, w);
  return job.checkpoints->Write(r.steps_total,
                                {{std::string(trainer::kTrainerSection), absl::Cord(w.Release())}});
}

// Opens this rank's dump of fresh rows: new, or (resuming) cut back to what
// the checkpoint counted and appended to. Rank 0 also cuts back the files of
// ranks the resumed run does not have.
absl::StatusOr<std::FILE*> OpenDump(const JobOptions& job, int rank, int world,
                                    const Restored* restored) {
  auto path = [&](size_t r) { return fmt::format("{}/rank-{}.txt", job.dump_dir, r); };
  if (restored == nullptr) {
    std::FILE* f = std::fopen(path(rank).c_str(), "w");
    if (f == nullptr) return absl::UnavailableError("cannot write " + path(rank));
    return f;
  }
  auto cut = [&](size_t r) -> absl::Status {
    const uint64_t size = r < restored->dump_sizes.size() ? restored->dump_sizes[r] : 0;
    std::FILE* f = std::fopen(path(r).c_str(), "a");  // creates it if missing
    if (f == nullptr) return absl::UnavailableError("cannot write " + path(r));
    std::fclose(f);
    if (::truncate(path(r).c_str(), static_cast<off_t>(size)) != 0) {
      return absl::UnavailableError(fmt::format("cannot truncate {} to {} bytes", path(r), size));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = cut(static_cast<size_t>(rank)); !s.ok()) return s;
  if (rank == 0) {
    for (size_t r = static_cast<size_t>(world); r < restored->dump_sizes.size(); ++r) {
      if (absl::Status s = cut(r); !s.ok()) return s;
    }
  }
  std::FILE* f = std::fopen(path(rank).c_str(), "a");
  if (f == nullptr) return absl::UnavailableError("cannot write " + path(rank));
  return f;
}

std::string JobFingerprint(const JobOptions& job, std::string_view shard_mode) {
  return fmt::format("shard_mode={};epochs={};plan_seed={};shards={}", shard_mode, job.epochs,
                     job.plan.seed, job.counts.size());
}

absl::Status ParseCheckpoint(std::string_view payload, const std::string& path,
                             const JobOptions& job, std::string_view shard_mode,
                             elastic::JobResume* start, Restored* restored) {
  trainer::StateReader r(payload, path);
  if (absl::Status s = trainer::CheckFingerprint(r, job.train, path); !s.ok()) return s;
  const std::string saved = r.String();
  const std::string here = JobFingerprint(job, shard_mode);
  if (r.status().ok() && saved != here) {
    return absl::FailedPreconditionError(
        fmt::format("checkpoint {} was written by a job with other options: {} there, {} here",
                    path, saved, here));
  }
  *start = elastic::Restore(r, job.counts);
  restored->path = path;
  const uint64_t world = r.U64();
  if (r.status().ok() && (world < 1 || world > (1u << 20))) {
    r.Fail(fmt::format("world size {}", world));
  }
  restored->world = static_cast<int>(world);
  restored->fresh_per_rank = r.U64s(world);
  restored->rows_per_rank = r.U64s(world);
  restored->dump_sizes = r.U64s(1u << 20);
  restored->digests = r.U64s(world);
  restored->has_pipelines = r.U64() != 0;
  if (restored->has_pipelines) {
    restored->run_start = elastic::Restore(r, job.counts);
    const uint64_t epochs = r.U64();
    if (r.status().ok() && epochs > 1024) r.Fail(fmt::format("{} epochs of trained flags", epochs));
    for (uint64_t i = 0; i < epochs && r.status().ok(); ++i)
      restored->trained.push_back(r.String());
    for (uint64_t i = 0; i < world && r.status().ok(); ++i) {
      restored->pipelines.push_back(r.String());
    }
  }
  if (r.status().ok() &&
      (restored->fresh_per_rank.size() != world || restored->rows_per_rank.size() != world ||
       restored->digests.size() != world)) {
    r.Fail("per-rank counts of another world size");
  }
  trainer::RestoreLoop(r, restored->train, restored->loop);
  restored->model = r.Rest();
  return r.status();
}

}  // namespace step
