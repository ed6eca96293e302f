// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/range_source.h: a source over record ranges of files (a rank's slice
// of an epoch plan, storage/epoch_plan.h), whatever their format.
//
// Each range is opened by a `RecordRangeOpener`; the formats provide openers
// that read exactly the range's bytes with one ranged read where the format
// allows it (uncompressed fixed-length files: always; uncompressed TFRecord:
// with an index, formats/tfrecord_index.h) and otherwise read the file from its
// start and drop the records before the range (compressed files; TFRecord
// without an index). Records keep their file's number in the dataset's list
// and their index in the file, so source_index names them the same way
// whichever rank reads them (record.h).
//
//   absl::StatusOr<std::vector<dataecho::RecordRange>> mine =
//       dataecho::PlanRank(counts, plan_options, progress, rank, world_size);
//   auto source = dataecho::MakeFixedLengthRangeSource(store, uris, *mine,
//                                                      {.record_bytes = 3073});
//   // any format: MakeRangeSource(uris, *mine, opener), with LimitToRange
//   // around a whole-file reader where the format has no random access
//
// Thread safety: a Stage (see stage.h).
#ifndef DATAECHO_FORMATS_RANGE_SOURCE_H_
#define DATAECHO_FORMATS_RANGE_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/storage/epoch_plan.h"

namespace dataecho {

// Opens records [range.begin, range.end) of file number range.file, at `uri`.
// The reader returns exactly those records (numbered by their index in the
// file), or fails: a range past the end of its file is DATA_LOSS "record range
// [b, e) of <uri> is cut short: the file ends at <uri>:<offset> ...", never a
// silently short range (the formats' openers do so).
using RecordRangeOpener = std::function<absl::StatusOr<std::unique_ptr<RecordFileReader>>(
    const std::string& uri, const RecordRange& range)>;

// A source reading `ranges` in order (interleaved as record_source.h says:
// with cycle_length k, k ranges at once); range.file indexes `uris`
// (INVALID_ARGUMENT, in order, when a range naming no file is reached). Stats as
// MakeRecordSource's; "files" counts ranges opened. Its state (checkpoint.h)
// is its position in `ranges`, with any cycle_length; with cycle_length > 1 a
// state of another list of ranges is INVALID_ARGUMENT (docs/checkpoint.md).
DATAECHO_EXPORT StagePtr<Record> MakeRangeSource(
    std::vector<std::string> uris, std::vector<RecordRange> ranges, RecordRangeOpener open,
    InterleaveOptions options = {}, std::string name = "range_source",
    std::shared_ptr<const CorruptionBudget> budget = nullptr);

// Wraps a reader of a whole file (from its first record) so that it returns
// only the records [range.begin, range.end): the ones before are read and
// dropped. If the file ends before record range.end - 1: DATA_LOSS "record
// range [b, e) of <uri> is cut short" (records the whole-file reader skipped
// as corrupt at the end of the range count as missing).
DATAECHO_EXPORT std::unique_ptr<RecordFileReader> LimitToRange(
    std::unique_ptr<RecordFileReader> whole_file, const RecordRange& range);

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_RANGE_SOURCE_H_
