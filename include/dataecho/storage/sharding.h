// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/sharding.h: splitting a file list between the workers of a job.
//
// Worker `rank` of `world_size` takes files rank, rank + world_size,
// rank + 2 * world_size, ... of the sorted list, so every file lands in
// exactly one shard and shard sizes differ by at most one. Rank and world
// size come from ShardOptions, or else from the launcher's environment:
// RANK/WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE
// (Open MPI), SLURM_PROCID/SLURM_NTASKS (Slurm), checked in that order;
// with none set, one worker holds everything.
//
//   absl::StatusOr<dataecho::Shard> shard = dataecho::ResolveShard({});
//   std::vector<std::string> mine = dataecho::ShardUris(files, *shard);
//
// Thread safety: the functions are thread-safe (they only read the
// environment).
#ifndef DATAECHO_STORAGE_SHARDING_H_
#define DATAECHO_STORAGE_SHARDING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"

namespace dataecho {

struct ShardOptions {
  // This worker's index in [0, world_size); -1: from the environment.
  int rank = -1;
  // Number of workers; -1: from the environment. Both or neither are set.
  int world_size = -1;
};

struct Shard {
  int rank = 0;
  int world_size = 1;
  // Where the values came from: "options", "RANK", "OMPI_COMM_WORLD_RANK",
  // "SLURM_PROCID" or "default".
  std::string source = "default";
};

// The shard from `options` or the environment. INVALID_ARGUMENT if only one
// of the two is set, a value is not a number, world_size < 1 or rank is
// outside [0, world_size).
DATAECHO_EXPORT absl::StatusOr<Shard> ResolveShard(const ShardOptions& options);

// The URIs of `shard` out of `uris` (in their order).
DATAECHO_EXPORT std::vector<std::string> ShardUris(const std::vector<std::string>& uris,
                                                   const Shard& shard);

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_SHARDING_H_
