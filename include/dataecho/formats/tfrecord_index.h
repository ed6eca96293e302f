// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/tfrecord_index.h: where the records of a TFRecord file start, and
// reading a range of them with one ranged read.
//
// TFRecord records have variable lengths, so record i's byte offset is only
// known by reading every header before it. A `TFRecordIndex` holds the offsets:
// written once next to the shards (the text format of DALI's tfrecord2idx,
// "<offset> <bytes>" per line, so DALI's index files work here and ours there),
// or built by scanning the file. With it, a record range is one ranged read of
// exactly its bytes; without it, a range reader reads the file from the start
// and drops the records before the range. Costs (docs/scale.md): an index is
// ~12 bytes of text per record; a scan reads the whole file (kStream) or
// one 12-byte ranged read per record (kHeaders: cheap on local files, one
// request per record on a remote store).
//
//   auto store = std::shared_ptr<dataecho::ObjectStore>(dataecho::OpenObjectStore());
//   absl::StatusOr<dataecho::TFRecordIndex> index =
//       dataecho::ReadTFRecordIndex(*store, "gs://b/train-00003.idx");
//   if (!index.ok()) index = dataecho::ScanTFRecordIndex(*store, "gs://b/train-00003");
//   auto reader = dataecho::OpenTFRecordRange(store, "gs://b/train-00003",
//                                             {.file = 3, .begin = 100, .end = 200}, &*index);
//
// Offsets are of the uncompressed stream; a compressed file cannot be read
// from the middle, so its ranges are always read from the start.
//
// Thread safety: functions are thread-safe; readers and sources as in
// tfrecord.h.
#ifndef DATAECHO_FORMATS_TFRECORD_INDEX_H_
#define DATAECHO_FORMATS_TFRECORD_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/formats/range_source.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/epoch_plan.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

struct TFRecordIndex {
  // offsets[i]: byte offset of record i; offsets[records()]: the end of the
  // last record. Empty for "no index".
  std::vector<uint64_t> offsets;

  uint64_t records() const { return offsets.empty() ? 0 : offsets.size() - 1; }
};

enum class TFRecordScan {
  kStream,   // read the file once, sequentially (any store, compressed files too)
  kHeaders,  // one 12-byte ranged read per record header (uncompressed only)
};

// Builds the index of `uri` by reading it. Headers are checked (length CRC,
// truncation: DATA_LOSS naming uri:offset); payloads are not.
DATAECHO_EXPORT absl::StatusOr<TFRecordIndex> ScanTFRecordIndex(
    ObjectStore& store, const std::string& uri, TFRecordScan scan = TFRecordScan::kStream,
    const TFRecordReaderOptions& options = {});

// DALI's text format: one "<offset> <bytes>" line per record.
DATAECHO_EXPORT std::string FormatTFRecordIndex(const TFRecordIndex& index);
// Parses that format; DATA_LOSS naming `uri` and the line if a line is not two
// numbers or the records are not back to back.
DATAECHO_EXPORT absl::StatusOr<TFRecordIndex> ParseTFRecordIndex(std::string_view text,
                                                                 std::string_view uri);
// Reads and parses the index file `index_uri` (one read).
DATAECHO_EXPORT absl::StatusOr<TFRecordIndex> ReadTFRecordIndex(ObjectStore& store,
                                                                const std::string& index_uri);

// Records [range.begin, range.end) of `uri` (record numbers go into
// source_index with range.file). With an index (and an uncompressed file): one
// ranged read of exactly their bytes; with `index` null or empty: read from
// the start. INVALID_ARGUMENT if the range lies beyond the index; DATA_LOSS
// "record range [b, e) of <uri> is cut short: the file ends at <uri>:<offset>"
// if the file ends before the range's last record (the file is shorter than
// its index, or without one, than the range).
DATAECHO_EXPORT absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenTFRecordRange(
    std::shared_ptr<ObjectStore> store, const std::string& uri, const RecordRange& range,
    const TFRecordIndex* index, const TFRecordReaderOptions& options = {},
    std::shared_ptr<CorruptionBudget> budget = nullptr);

// A source over `ranges` of the TFRecord files `uris` ("tfrecord_source").
// `indexes` (null, or one entry per URI, an entry empty where a file has no
// index) say where records start.
DATAECHO_EXPORT StagePtr<Record> MakeTFRecordRangeSource(
    std::shared_ptr<ObjectStore> store, std::vector<std::string> uris,
    std::vector<RecordRange> ranges, std::shared_ptr<const std::vector<TFRecordIndex>> indexes,
    const TFRecordReaderOptions& options = {}, const InterleaveOptions& interleave = {});

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_TFRECORD_INDEX_H_
