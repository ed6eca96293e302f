// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/range_source.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/checkpoint.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_source_base.h"

namespace dataecho {
namespace {

// Drops the records before the range from a whole-file reader and ends at its
// end; DATA_LOSS if the file ends before the range's last record.
class RangeLimitedReader final : public RecordFileReader {
 public:
  RangeLimitedReader(std::unique_ptr<RecordFileReader> reader, RecordRange range)
      : reader_(std::move(reader)), range_(range) {}

  absl::StatusOr<std::optional<Record>> Next() override {
    while (true) {
      if (done_) return std::nullopt;
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> r, reader_->Next());
      if (!r.has_value()) {
        done_ = true;
        if (next_index_ >= range_.end) return r;
        const std::string file = last_ == nullptr ? fmt::format("file {}", range_.file) : *last_;
        return absl::DataLossError(fmt::format(
            "record range [{}, {}) of {} is cut short: the file ends after {} records{} (it has "
            "fewer records than the range says)",
            range_.begin, range_.end, file, next_index_,
            last_ == nullptr ? "" : fmt::format(", the last one at {}:{}", file, offset_)));
      }
      const uint64_t index = r->source_index & ((uint64_t{1} << kRecordIndexBits) - 1);
      next_index_ = index + 1;
      last_ = r->source;
      offset_ = r->offset;
      if (index < range_.begin) continue;
      if (index >= range_.end) {
        done_ = true;
        return std::nullopt;
      }
      return r;
    }
  }

  void Cancel() override { reader_->Cancel(); }

 private:
  const std::unique_ptr<RecordFileReader> reader_;
  const RecordRange range_;
  bool done_ = false;
  uint64_t next_index_ = 0;                  // the index after the last record read
  std::shared_ptr<const std::string> last_;  // URI of the last record read
  uint64_t offset_ = 0;                      // offset of the last record read
};

}  // namespace

std::unique_ptr<RecordFileReader> LimitToRange(std::unique_ptr<RecordFileReader> whole_file,
                                               const RecordRange& range) {
  return std::make_unique<RangeLimitedReader>(std::move(whole_file), range);
}

StagePtr<Record> MakeRangeSource(std::vector<std::string> uris, std::vector<RecordRange> ranges,
                                 RecordRangeOpener open, InterleaveOptions options,
                                 std::string name, std::shared_ptr<const CorruptionBudget> budget) {
  // The record source reads a list of "files": here one entry per range, and
  // the opener maps its position in that list back to the range.
  std::vector<std::string> range_uris;
  range_uris.reserve(ranges.size());
  for (const RecordRange& r : ranges) {
    range_uris.push_back(r.file < uris.size() ? uris[r.file] : std::string());
  }
  // With cycle_length > 1 the ranges go into the state's shape, so that a
  // state of another list of ranges over the same files is refused (a
  // sequential range source keeps the shape its older states have).
  OptionsHash list_hash;
  list_hash.Add(static_cast<uint64_t>(ranges.size()));
  for (const RecordRange& r : ranges) list_hash.Add(r.file).Add(r.begin).Add(r.end);
  // References to records (a Shuffle's, an Echo's) name their dataset file:
  // they are read again from that file, from its start to the end of the
  // last range of it in the list (a reference is to a record of some range).
  auto reread = std::make_shared<internal::RereadFiles>();
  std::vector<uint64_t> file_end(uris.size(), 0);
  for (const RecordRange& r : ranges) {
    if (r.file < uris.size()) file_end[r.file] = std::max(file_end[r.file], r.end);
    reread->entry_file.push_back(r.file);
  }
  reread->uris = uris;
  reread->open = [file_end = std::move(file_end), open](
                     const std::string& uri,
                     uint64_t file) -> absl::StatusOr<std::unique_ptr<RecordFileReader>> {
    if (file >= file_end.size() || file_end[file] == 0) {
      return absl::DataLossError(fmt::format(
          "pipeline state: a record of file {}, of which the source reads no range", file));
    }
    return open(uri, RecordRange{.file = file, .begin = 0, .end = file_end[file]});
  };
  auto shared_ranges = std::make_shared<const std::vector<RecordRange>>(std::move(ranges));
  const size_t num_files = uris.size();
  RecordFileOpener by_position =
      [shared_ranges, num_files, open = std::move(open)](
          const std::string& uri,
          uint64_t position) -> absl::StatusOr<std::unique_ptr<RecordFileReader>> {
    const RecordRange& range = (*shared_ranges)[position];
    if (range.file >= num_files) {
      return absl::InvalidArgumentError(
          fmt::format("record range {} names file {}, the source has {} files", position,
                      range.file, num_files));
    }
    return open(uri, range);
  };
  return internal::MakeRangedRecordSource(std::move(range_uris), std::move(by_position), {},
                                          options, std::move(name), std::move(budget),
                                          list_hash.value(), std::move(reread));
}

}  // namespace dataecho
