// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/sharding.h: splitting a file list between the workers of a job.
//
// Worker `rank` of `world_size` takes files rank, rank + world_size,
// rank + 2 * world_size, ... of the sorted list, so every file lands in
// exactly one shard and shard file counts differ by at most one. Rank and
// world size come from ShardOptions, or else from the launcher's environment:
// RANK/WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE
// (Open MPI), SLURM_PROCID/SLURM_NTASKS (Slurm), checked in that order;
// with none set, one worker holds everything. A world size, from the options
// or the environment, is at most ShardOptions::kMaxWorldSize: every reader of
// these variables (the library, the `dataecho shards` CLI, the Python module)
// refuses WORLD_SIZE=2147483647 at once instead of sizing per-rank tables by it.
//
//   absl::StatusOr<dataecho::Shard> shard = dataecho::ResolveShard({});
//   if (!shard.ok()) return shard.status();
//   absl::StatusOr<std::vector<std::string>> mine = dataecho::ShardUris(files, *shard);
//   if (!mine.ok()) return mine.status();  // e.g. fewer files than ranks
//   dataecho::InterleaveOptions interleave;
//   dataecho::SetShardFileNumbering(*shard, &interleave);  // job-wide source_index
//   auto source = dataecho::MakeTFRecordSource(store, *mine, {}, interleave);
//   absl::StatusOr<dataecho::ShardSizes> sizes =
//       dataecho::MeasureShards(*store, files, shard->world_size);
//   std::puts(sizes->Summary().c_str());  // "3 rank(s) over 4 file(s): files 2/1/1, ..."
//
// Why a rank without data is an error: in a data-parallel job every rank
// takes a step together (an all-reduce per step); a rank whose shard is
// empty, or smaller than the others', runs out first and the others wait for
// it at the next collective, forever. ShardUris refuses an empty shard unless
// ShardOptions::allow_empty says otherwise; a file-level split is still
// uneven by up to one file (2/1/1 files for 4 files and 3 ranks): MeasureShards
// reports the sizes so a job can check them (a record-level split is not
// done here).
//
// Record numbers: a record source numbers its files in its records'
// source_index (file << 40 | record). Given a shard's list as is, every
// worker would number its first file 0, so records of different workers
// would share indices, and so would the draws keyed by them (crops, echo
// copies). SetShardFileNumbering (a record source's option, so declared in
// formats/record_source.h) makes the source number each file by its
// position in the whole sorted list (rank + i * world_size), so source_index
// names a record uniquely across the job and indices of different workers can
// be merged.
//
// Thread safety: the functions are thread-safe (ResolveShard only reads the
// environment; MeasureShards calls the store's thread-safe Stat).
#ifndef DATAECHO_STORAGE_SHARDING_H_
#define DATAECHO_STORAGE_SHARDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

struct ShardOptions {
  // The largest world size accepted: 2^20 ranks, far above the largest
  // data-parallel jobs (tens of thousands of accelerators). What a job plans
  // per rank (MeasureShards, epoch plans) is sized by it.
  static constexpr int kMaxWorldSize = 1 << 20;

  // This worker's index in [0, world_size); -1: from the environment.
  int rank = -1;
  // Number of workers, 1..kMaxWorldSize; -1: from the environment. Both or
  // neither are set.
  int world_size = -1;
  // Let ShardUris give a worker no file (fewer files than workers) instead
  // of failing. Only for jobs whose workers do not step together.
  bool allow_empty = false;
};

struct Shard {
  int rank = 0;
  int world_size = 1;
  // Where the values came from: "options", "RANK", "OMPI_COMM_WORLD_RANK",
  // "SLURM_PROCID" or "default".
  std::string source = "default";
  // ShardOptions::allow_empty.
  bool allow_empty = false;
};

// The shard from `options` or the environment. INVALID_ARGUMENT (naming the
// variables and their values) if only one of the two is set, a value is not
// a number, world_size is outside [1, kMaxWorldSize] or rank is outside
// [0, world_size).
DATAECHO_EXPORT absl::StatusOr<Shard> ResolveShard(const ShardOptions& options);

// The URIs of `shard` out of `uris` (in their order). FAILED_PRECONDITION,
// naming the rank, the world size, its source and the file count, when the
// shard would be empty (fewer files than workers) and !shard.allow_empty.
// INVALID_ARGUMENT for a shard outside [0, world_size).
DATAECHO_EXPORT absl::StatusOr<std::vector<std::string>> ShardUris(
    const std::vector<std::string>& uris, const Shard& shard);

// One worker's share of a file list.
struct ShardSize {
  int rank = 0;
  int64_t files = 0;
  int64_t bytes = 0;  // the files' sizes as stored (compressed if they are)
};

// How a file list splits between the workers of a job, in bytes: a record
// count is not known without reading every file (`dataecho shards --records`
// reads them).
struct DATAECHO_EXPORT ShardSizes {
  std::vector<ShardSize> ranks;  // one per rank, in rank order

  // The largest shard's bytes over the smallest's: 1 for an even split,
  // infinity when a rank has no bytes (and another has).
  double Imbalance() const;
  // One line, e.g. "3 rank(s) over 4 file(s): files 2/1/1, bytes 500/200/300,
  // largest/smallest 2.50".
  std::string Summary() const;
};

// The split ShardUris makes of `uris` between `world_size` workers, with the
// size of every file from `store.Stat`. INVALID_ARGUMENT for world_size
// outside [1, ShardOptions::kMaxWorldSize]; the first Stat error (e.g.
// NOT_FOUND naming the URI).
DATAECHO_EXPORT absl::StatusOr<ShardSizes> MeasureShards(ObjectStore& store,
                                                         const std::vector<std::string>& uris,
                                                         int world_size);

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_SHARDING_H_
