// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/epoch_plan.h: the records of one epoch in a global, seeded order, and
// each rank's slice of it, also after restarts on a different number of ranks.
//
// Metadata only: the plan needs each file's record count (formats give it
// cheaply: fixed-length and IDX from the object size or header, TFRecord from
// an index, see formats/range_source.h), never the records themselves.
//
// The order of epoch k is a function of (seed, k) alone: the files in a seeded
// permutation (EpochFileOrder), each file's records in file order. Rank r of W
// reads one contiguous slice of that order, in order:
//
//   ShardMode::kRecords  slices of floor(T/W) or ceil(T/W) of the T records: a
//                        rank may read the tail of one file and the head of the
//                        next (ranged reads); shares differ by at most one record.
//   ShardMode::kFiles    whole files: a file goes to the rank whose share
//                        [r*T/W, (r+1)*T/W) its first record falls in, so each
//                        rank's count is within one file of T/W. A rank gets no
//                        file when files are larger than T/W (use kRecords).
//
// Records within a rank's buffer are reshuffled downstream (a Shuffle stage
// seeded per epoch, e.g. with MixSeed(seed, epoch, rank)).
//
// Elastic resume. A job that stops mid-epoch saves where it was: the world size
// and its position, the number of records of the epoch the job has consumed
// (counted from the epoch's start over all ranks; EpochRestart). The ranks of a
// run consume their slices in lockstep, so a position P says how much each rank
// consumed: rank r's count among the first P records of the round-robin
// interleaving of the slices (one record of every rank in turn; a rank whose
// slice is exhausted drops out). With every slice at least c long, P = W * c
// means every rank consumed c. Where ranks consume at different rates (echoing
// changes how many fresh records a step takes), each rank's count can be saved
// instead (EpochRestart::consumed). The next run, at any world size, splits the
// records not consumed, in the epoch's order, the same way; any number of
// restarts chain. Every record of the epoch is then read exactly once across
// the runs, as long as each rank reads its ranges in order (a range source
// with cycle_length 1; its reads are still concurrent through read-ahead) and
// "consumed" counts records the job will not need again: records read from the
// source but still held in a Shuffle buffer at the stop are not consumed (save
// what the trainer took with no reordering buffer between, or save the buffer
// too; docs/scale.md).
//
//   std::vector<uint64_t> counts = ...;        // records per file, same on every rank
//   dataecho::EpochPlanOptions options{.seed = 7, .mode = dataecho::ShardMode::kRecords};
//   dataecho::EpochProgress progress{.epoch = 3};
//   progress.runs.push_back({.world_size = 8, .position = 120000});  // stopped there
//   absl::StatusOr<std::vector<dataecho::RecordRange>> mine =
//       dataecho::PlanRank(counts, options, progress, rank, /*world_size=*/5);
//   // read (*mine)[i].file, records [begin, end), in that order
//
// Sizes: a world size (this run's or a restart's) is 1..ShardOptions::
// kMaxWorldSize (storage/sharding.h), and the record counts must sum to at
// most 2^64 - 1; anything else is INVALID_ARGUMENT naming the value, checked
// before anything is allocated per rank (RESOURCE_EXHAUSTED if even that does
// not fit the memory cap, memory.h).
//
// Thread safety: pure functions of their arguments; thread-safe.
#ifndef DATAECHO_STORAGE_EPOCH_PLAN_H_
#define DATAECHO_STORAGE_EPOCH_PLAN_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"

namespace dataecho {

enum class ShardMode {
  kFiles,    // whole files (or, after a restart, the unread parts of files)
  kRecords,  // contiguous record ranges, balanced to one record
};

// "files" or "records".
DATAECHO_EXPORT std::string_view ShardModeName(ShardMode mode);
// Parses a name above; INVALID_ARGUMENT otherwise.
DATAECHO_EXPORT absl::StatusOr<ShardMode> ParseShardMode(std::string_view name);

// Records [begin, end) of file number `file` (its index in the dataset's list).
struct RecordRange {
  uint64_t file = 0;
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t size() const { return end - begin; }
  bool operator==(const RecordRange&) const = default;
};

struct EpochPlanOptions {
  // Seeds the file order of every epoch.
  uint64_t seed = 0;
  ShardMode mode = ShardMode::kRecords;
  // false: the files in list order every epoch (no reshuffle).
  bool shuffle_files = true;
};

// One earlier run of an epoch that stopped before the epoch's end.
struct EpochRestart {
  // Ranks of that run, 1..ShardOptions::kMaxWorldSize.
  int world_size = 1;
  // Records of the epoch consumed by the job when the run stopped, counted from
  // the epoch's start (so it includes the runs before): >= the previous run's
  // position, <= the epoch's records.
  uint64_t position = 0;
  // Optional: the records each rank consumed in this run (world_size entries,
  // each at most its slice; their sum is position minus the previous run's
  // position). Empty: derived from `position` by the lockstep rule (file comment).
  std::vector<uint64_t> consumed;
};

// Where an epoch stands: its number and its earlier runs, oldest first (empty:
// the epoch starts from its beginning). A checkpoint carries this.
struct EpochProgress {
  uint64_t epoch = 0;
  std::vector<EpochRestart> runs;
};

// The file order of `epoch`: a permutation of [0, num_files) that depends on
// (seed, epoch) only (the identity if !shuffle). What a source that repeats its
// files should read them in, epoch after epoch.
DATAECHO_EXPORT std::vector<uint64_t> EpochFileOrder(size_t num_files, uint64_t seed,
                                                     uint64_t epoch, bool shuffle = true);

// Every rank's slice of the rest of an epoch.
struct EpochPlan {
  uint64_t epoch = 0;
  uint64_t total_records = 0;  // records of the epoch
  uint64_t position = 0;       // consumed before this run (the last restart's position)
  // ranks[r]: rank r's ranges, in the order it reads them.
  std::vector<std::vector<RecordRange>> ranks;

  // Records of rank r's slice.
  DATAECHO_EXPORT uint64_t RankRecords(int rank) const;
};

// The plan of `world_size` ranks for the rest of `progress.epoch` over files
// with `records_per_file` records each. INVALID_ARGUMENT for a world_size
// outside [1, ShardOptions::kMaxWorldSize], record counts whose sum overflows
// 64 bits, or an inconsistent `progress` (naming the run and the value).
DATAECHO_EXPORT absl::StatusOr<EpochPlan> PlanEpoch(std::span<const uint64_t> records_per_file,
                                                    const EpochPlanOptions& options,
                                                    const EpochProgress& progress, int world_size);

// Rank `rank`'s ranges of PlanEpoch(...) (the same result, one rank's part).
DATAECHO_EXPORT absl::StatusOr<std::vector<RecordRange>> PlanRank(
    std::span<const uint64_t> records_per_file, const EpochPlanOptions& options,
    const EpochProgress& progress, int rank, int world_size);

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_EPOCH_PLAN_H_
