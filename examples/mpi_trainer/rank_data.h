// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// rank_data.h: one rank's training data in the MPI data-parallel trainer.
//
// Every rank runs its own dataecho pipeline over its slice of the TFRecord
// shards. The slice comes from the epoch plan (dataecho/storage/epoch_plan.h):
// for each epoch the job's order of the records is fixed by the seed and the
// epoch, and rank r of W reads its part of it (whole shards, or record ranges
// by ranged reads through the shards' indexes). All the epochs of a run are
// one range source whose "files" are the run's ranges (the range's shard and
// the part of its index covering it), so that the source, and so a checkpoint
// of the rank's pipeline, has the same shape all run long and a buffered
// record is read again from its range; a record's source index names its
// range, so every epoch gets its own augmentations and the fresh rows can be
// told apart by epoch (Origin()).
// After the source: decode, Prefetch, then the example trainer's pipeline
// (trainer::EchoedTrainBatches: echo, augment, shuffle, batch, prefetch).
//
//   rank_data::RankDataOptions o;
//   o.uris = shards; o.counts = counts; o.indexes = indexes;
//   o.rank = rank; o.world_size = world; o.epochs = 2;
//   auto data = rank_data::MakeRankData(o);
//   auto batch = (*data)->Next();   // std::nullopt after the last epoch
//
// Thread safety: TrainData is used by one thread.
#ifndef DATAECHO_EXAMPLES_MPI_TRAINER_RANK_DATA_H_
#define DATAECHO_EXAMPLES_MPI_TRAINER_RANK_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/storage/epoch_plan.h"
#include "mpi_trainer/elastic.h"
#include "trainer/data.h"
#include "trainer/trainer.h"

namespace rank_data {

// Where a row comes from: its epoch, its shard (the index in the shard list)
// and its record in the shard. A rank's source reads one "file" per range of
// the run (MakeRankData's `layout`: the epoch, shard and first record of each),
// its records numbered from 0 in the range: source index = (range << 40) | i.
struct RowOrigin {
  uint64_t epoch = 0;
  uint64_t file = 0;
  uint64_t record = 0;
};
// The origin of `source_index` by `layout`; epoch and file UINT64_MAX for a
// range the layout does not have.
RowOrigin Origin(uint64_t source_index, const std::vector<RowOrigin>& layout);

struct RankDataOptions {
  // Pipeline settings: echo, insert, batch_size (per rank), shuffle_buffer,
  // prefetch_depth, decode_parallelism, seed (of this rank's random stages).
  trainer::TrainOptions train;
  // The shards, the same sorted list on every rank, with their record counts
  // and indexes (one per shard).
  std::vector<std::string> uris;
  std::vector<uint64_t> counts;
  std::shared_ptr<const std::vector<dataecho::TFRecordIndex>> indexes;
  // The job's epoch plan: its seed and shard mode.
  dataecho::EpochPlanOptions plan;
  int rank = 0;
  int world_size = 1;
  // Epochs to read; 0 = as many as train.fresh_budget needs, and one more
  // (the job stops at the budget).
  int64_t epochs = 0;
  // Where a resumed job's epochs stand: reading starts at resume.first_epoch,
  // each epoch with its leftover and the plan of its rest (elastic.h).
  elastic::JobResume resume;
  // > 0: serve the shards' directory over loopback HTTP with this latency per
  // request and read them from there.
  double latency_ms = 0;
};

// This rank's batches; the stream ends after `epochs` epochs (a last partial
// batch included).
// `layout` receives the origin of each range of the source (see Origin()).
absl::StatusOr<std::unique_ptr<trainer::TrainData>> MakeRankData(const RankDataOptions& options,
                                                                 std::vector<RowOrigin>* layout);

// The index of every shard, by reading each once (Fashion-MNIST's 832-byte
// records: streaming beats a ranged read per header ~15x on local files;
// docs/scale.md compares the ways).
absl::StatusOr<std::vector<dataecho::TFRecordIndex>> IndexShards(
    const std::vector<std::string>& uris);

// Indexes as a flat array (for MPI_Bcast) and back:
// [files, records_0, offsets_0..., records_1, offsets_1..., ...].
std::vector<uint64_t> FlattenIndexes(const std::vector<dataecho::TFRecordIndex>& indexes);
absl::StatusOr<std::vector<dataecho::TFRecordIndex>> UnflattenIndexes(
    const std::vector<uint64_t>& flat);

}  // namespace rank_data

#endif  // DATAECHO_EXAMPLES_MPI_TRAINER_RANK_DATA_H_
