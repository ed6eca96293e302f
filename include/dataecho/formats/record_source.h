// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/record_source.h: the source stage that reads records from a list of files,
// one at a time or k at once (interleaved), whatever their format.
//
// Each format (TFRecord, fixed-length, ...) provides a `RecordFileReader` that
// streams the records of one file; `MakeRecordSource()` turns a list of URIs
// and a way to open one into a `Stage<Record>`. Format headers offer ready-made
// sources (`MakeTFRecordSource()`, `MakeFixedLengthSource()`), so most users
// only pick `InterleaveOptions`:
//
//   dataecho::InterleaveOptions interleave;
//   interleave.cycle_length = 4;  // 4 files in flight, each on its own thread
//   auto source = dataecho::MakeTFRecordSource(store, uris, {}, interleave);
//
// Interleaving: with cycle_length k > 1, k threads each read a share of the
// files (thread j reads files j, j+k, j+2k, ... in order) into a bounded
// queue. By default the output takes one record from each thread in turn
// (round-robin; a thread whose files are done drops out), so the order is the
// same on every run. With `deterministic = false` the output takes whichever
// record is ready first, so one slow object does not stall the others.
// Errors keep their place: records before the error come out first. There
// are never more threads or slots than files, whatever cycle_length says.
//
// Epochs: the source can start over (Stage::Restart, driven by a Repeat
// stage, repeat.h). Epoch e > 0 reads the files in a seeded shuffled order
// (InterleaveOptions::shuffle_files_each_epoch) and stamps e on its records
// (Record::epoch); a record's source_index keeps naming the file by its
// number (its position in the given list, or in the whole list of which this
// is a shard: InterleaveOptions::first_file_index), the same in every epoch.
//
// Thread safety: a Stage (see stage.h). CorruptionBudget is thread-safe.
#ifndef DATAECHO_FORMATS_RECORD_SOURCE_H_
#define DATAECHO_FORMATS_RECORD_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/storage/sharding.h"

namespace dataecho {

// Compression of a whole file (as TensorFlow's TFRecord compression_type).
enum class Compression {
  kNone,
  kGzip,  // gzip (RFC 1952), possibly several members
  kZlib,  // zlib (RFC 1950)
  kAuto,  // kGzip if the URI ends in ".gz", else kNone
};

// "none", "gzip", "zlib", "auto" (src/formats/compression.cc).
DATAECHO_EXPORT std::string_view CompressionName(Compression compression);
// The Compression CompressionName() names `name`; INVALID_ARGUMENT "unknown
// compression '<name>' (one of none, gzip, zlib, auto)" for any other name.
DATAECHO_EXPORT absl::StatusOr<Compression> ParseCompression(std::string_view name);

// Counts corrupt regions skipped across the files of one source and fails
// once more than `limit` were skipped. Thread-safe.
class DATAECHO_EXPORT CorruptionBudget {
 public:
  explicit CorruptionBudget(int64_t limit) : limit_(limit) {}

  // Counts one skipped region described by `what` (e.g. "corrupted record at
  // uri:offset"). OK while the count stays within the limit, else DATA_LOSS.
  absl::Status Skip(std::string_view what);

  int64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }

 private:
  const int64_t limit_;
  std::atomic<int64_t> skipped_{0};
};

// Streams the records of one file, in order. Used by one thread at a time,
// except Cancel(), which any thread may call.
class DATAECHO_EXPORT RecordFileReader {
 public:
  virtual ~RecordFileReader() = default;
  // The next record, std::nullopt at the end of the file, or an error.
  virtual absl::StatusOr<std::optional<Record>> Next() = 0;
  // A blocked or later Next() returns CANCELLED promptly.
  virtual void Cancel() = 0;
};

// Opens file number `file_index` (its position in the source's list) at `uri`.
using RecordFileOpener = std::function<absl::StatusOr<std::unique_ptr<RecordFileReader>>(
    const std::string& uri, uint64_t file_index)>;

struct InterleaveOptions {
  // Files read concurrently, each by its own thread. 1 = one file after the
  // other, read on the consumer's thread (no extra threads).
  int cycle_length = 1;
  // Records each reading thread may hold ahead of the consumer.
  size_t buffered_records = 64;
  // true: fixed round-robin order. false: first ready record first.
  bool deterministic = true;
  // Epochs after the first (a Repeat stage restarts the source, repeat.h)
  // read the files in an order shuffled from (file_order_seed, epoch); epoch
  // 0 reads them as given. false: as given in every epoch.
  bool shuffle_files_each_epoch = true;
  uint64_t file_order_seed = 0;
  // How the files are numbered in the source_index of the records the
  // source emits (file = source_index >> kRecordIndexBits, record.h): file i
  // of the list is number first_file_index + i * file_index_stride (its
  // reader still gets i; the source renumbers, and maps references back). A
  // worker's share of a longer list sets them so that its records keep the
  // numbers they have in the whole list, unique across the job (ShardUris
  // gives files rank, rank + world_size, ...: SetShardFileNumbering below).
  // Default: the position in this list.
  uint64_t first_file_index = 0;
  uint64_t file_index_stride = 1;
};

// Sets `options`' file numbering (first_file_index, file_index_stride) for a
// source over ShardUris(uris, shard) (storage/sharding.h): file i of the
// share is file rank + i * world_size of the whole list, so source_index
// names a record uniquely across the job.
DATAECHO_EXPORT void SetShardFileNumbering(const Shard& shard, InterleaveOptions* options);

// A source over `uris`, in that order (see the file comment for
// interleaving). `name` names the stage in the stats ("tfrecord_source"). If
// `budget` is given its skip count is reported as the "skipped_corrupt" stat.
// Stats: elements, bytes (payload), consumer_wait (cycle_length > 1: time
// Next() blocked because no reader had a record ready), and extra "files"
// (opened), "skipped_corrupt", "busy_s" (cycle_length 1: time reading in
// Next(), on the consumer's thread). Counts add up over all epochs.
DATAECHO_EXPORT StagePtr<Record> MakeRecordSource(
    std::vector<std::string> uris, RecordFileOpener open, InterleaveOptions options = {},
    std::string name = "record_source", std::shared_ptr<const CorruptionBudget> budget = nullptr);

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_RECORD_SOURCE_H_
