// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// elastic.h: where the MPI trainer's epochs stand when it checkpoints, so that
// a job resumed on any number of ranks trains every record of the interrupted
// epochs exactly once (dataecho/storage/epoch_plan.h's elastic resume).
//
// Rank-local pipeline states cannot serve another world size, so a checkpoint
// stores the epochs' progress instead. A rank reads its ranges in order but
// trains them shuffled (a Shuffle buffer, echo, prefetch queues sit between
// the source and the step), so what a rank trained is not a prefix of its
// slice. At a checkpoint the ranks OR together which records each trained
// fresh in this run (a byte per record of each epoch in flight), and every
// epoch's progress becomes:
//
//   - per rank of this run, consumed = 1 + the position in its planned slice
//     of the last record it trained (an EpochRestart with this world size):
//     the plan of the next run starts behind it;
//   - leftover: the records this run had to train, not trained and not in
//     the rest of the plan (read, but still in a buffer at the stop). The
//     next run hands them out first, split evenly over its ranks.
//
// Epochs before `first_epoch` are done; epochs listed in `epochs` resume from
// their progress and leftover; later epochs start fresh. Any number of
// resumes chain (each adds a run to the progress).
//
//   elastic::JobResume resume;                      // or decoded from a checkpoint
//   auto mine = elastic::RankRanges(counts, plan, resume, epoch, rank, world);
//   elastic::Tracker tracker(counts);  tracker.Trained(epoch, source_index);
//   ... at a checkpoint, with `trained` the job's union of the trackers' bytes
//   //  of the epochs from resume.first_epoch on (MPI_BOR):
//   absl::StatusOr<elastic::JobResume> next =
//       elastic::Advance(counts, plan, resume, world, trained);
//
// Thread safety: plain values and pure functions.
#ifndef DATAECHO_EXAMPLES_MPI_TRAINER_ELASTIC_H_
#define DATAECHO_EXAMPLES_MPI_TRAINER_ELASTIC_H_

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/storage/epoch_plan.h"
#include "trainer/train_state.h"

namespace elastic {

// A record of the dataset: its file and its index in the file.
struct RecordId {
  uint64_t file = 0;
  uint64_t record = 0;
  bool operator==(const RecordId&) const = default;
};

struct EpochResume {
  dataecho::EpochProgress progress;  // progress.epoch: the epoch
  std::vector<RecordId> leftover;    // handed out first, in this order
};

struct JobResume {
  uint64_t first_epoch = 0;         // every epoch before it is done
  std::vector<EpochResume> epochs;  // ascending epochs >= first_epoch
  const EpochResume* Find(uint64_t epoch) const;
};

// Rank `rank` of `world`'s ranges of `epoch`: its share of the epoch's
// leftover (contiguous, balanced to one record), then its slice of the plan
// of the rest.
absl::StatusOr<std::vector<dataecho::RecordRange>> RankRanges(
    std::span<const uint64_t> counts, const dataecho::EpochPlanOptions& plan,
    const JobResume& resume, uint64_t epoch, int rank, int world);

// The records each rank trained fresh in this run, one byte per record of the
// dataset per epoch (0 or 1: the ranks' arrays are OR-ed, MPI_BOR).
class Tracker {
 public:
  explicit Tracker(std::span<const uint64_t> counts);
  // Marks the record `source_index` (file << 40 | record, the shard's index
  // in the list) of `epoch`.
  void Trained(uint64_t epoch, uint64_t source_index);
  // The highest epoch marked, or -1.
  int64_t last_epoch() const;
  // The bytes of `epoch` (all zero if none marked), to be OR-ed over ranks.
  std::vector<uint8_t> Bytes(uint64_t epoch) const;
  // Marks every record whose byte is set in `bytes` (a checkpoint's flags).
  void Seed(uint64_t epoch, std::string_view bytes);
  uint64_t Id(RecordId r) const { return offsets_[r.file] + r.record; }

 private:
  std::vector<uint64_t> offsets_;  // first id of each file; back() = total
  std::map<uint64_t, std::vector<uint8_t>> epochs_;
};

// The resume after this run: `start` is what this run started from, `world`
// its ranks, `trained[k - start.first_epoch]` the job's trained bytes of epoch
// k (k from start.first_epoch to start.first_epoch + trained.size() - 1).
absl::StatusOr<JobResume> Advance(std::span<const uint64_t> counts,
                                  const dataecho::EpochPlanOptions& plan, const JobResume& start,
                                  int world, const std::vector<std::vector<uint8_t>>& trained);

void Save(const JobResume& resume, trainer::StateWriter& w);
// DATA_LOSS in the reader for values that do not fit `counts`.
JobResume Restore(trainer::StateReader& r, std::span<const uint64_t> counts);

}  // namespace elastic

#endif  // DATAECHO_EXAMPLES_MPI_TRAINER_ELASTIC_H_
