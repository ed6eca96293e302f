// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/fixed_length.h"

#include <algorithm>
#include <utility>

#include "dataecho/formats/range_source.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_input.h"

namespace dataecho {
namespace {

class FixedLengthFileReader final : public RecordFileReader {
 public:
  // Reads a file from its start (`from_start`: the header is skipped first) or,
  // for a ranged read, from record `first`. `records` ends an
  // uncompressed file (whole records it holds); `end` (< records: a range)
  // stops earlier without checking the end of the file. Records before `skip`
  // are read and dropped (ranges of compressed files).
  FixedLengthFileReader(std::unique_ptr<internal::RecordInput> in, uint64_t file_index,
                        const FixedLengthOptions& options, uint64_t records, bool from_start = true,
                        uint64_t first = 0, uint64_t skip = 0, uint64_t end = UINT64_MAX)
      : in_(std::move(in)),
        file_index_(file_index),
        options_(options),
        records_(records),
        end_(end),
        skip_(skip),
        index_(first),
        skipped_header_(!from_start) {}

  absl::StatusOr<std::optional<Record>> Next() override {
    while (true) {
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> r, NextInFile());
      if (!r.has_value() || r->source_index >= MakeSourceIndex(file_index_, skip_)) return r;
    }
  }

  void Cancel() override { in_->Cancel(); }

 private:
  absl::StatusOr<std::optional<Record>> NextInFile() {
    if (done_) return std::nullopt;
    if (!skipped_header_) DATAECHO_RETURN_IF_ERROR(SkipHeader());
    const uint64_t start = in_->position();
    if (index_ >= end_) {
      done_ = true;
      return std::nullopt;
    }
    if (!in_->compressed() && index_ == records_) {
      done_ = true;
      if (in_->object_size() - options_.footer_bytes != start) return Truncated(start);
      return std::nullopt;
    }
    MutableBuffer data(static_cast<size_t>(options_.record_bytes));
    DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(data.data(), data.size()));
    if (got < data.size()) {
      done_ = true;
      if (!in_->compressed() || got != options_.footer_bytes) return Truncated(start);
      if (end_ != UINT64_MAX) {  // a range of a compressed file, past its last record
        return absl::DataLossError(
            fmt::format("record range [{}, {}) of {} is cut short: the file ends at {}:{}, "
                        "before record {} (it has fewer records than the range says)",
                        skip_, end_, *in_->uri(), *in_->uri(), start, index_));
      }
      return std::nullopt;
    }
    return in_->MakeRecord(std::move(data), start, file_index_, index_++);
  }

  absl::Status SkipHeader() {
    skipped_header_ = true;
    std::vector<uint8_t> header(static_cast<size_t>(options_.header_bytes));
    DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(header.data(), header.size()));
    if (got < header.size()) {
      done_ = true;
      return absl::DataLossError(
          fmt::format("truncated header of {} ({} of {} bytes)", *in_->uri(), got, header.size()));
    }
    return absl::OkStatus();
  }

  absl::Status Truncated(uint64_t offset) {
    return absl::DataLossError(fmt::format("truncated record at {}:{} (records are {} bytes)",
                                           *in_->uri(), offset, options_.record_bytes));
  }

  std::unique_ptr<internal::RecordInput> in_;
  const uint64_t file_index_;
  const FixedLengthOptions options_;
  const uint64_t records_;  // whole records in an uncompressed file
  const uint64_t end_;
  const uint64_t skip_;
  uint64_t index_;
  bool skipped_header_;
  bool done_ = false;
};

absl::Status CheckRecordBytes(const FixedLengthOptions& options) {
  if (options.record_bytes == 0 || options.record_bytes > FixedLengthOptions::kMaxRecordBytes) {
    return absl::InvalidArgumentError(
        fmt::format("record_bytes must be in 1..2^30, got {}", options.record_bytes));
  }
  return absl::OkStatus();
}

// Whole records between the header and the footer of an uncompressed object.
absl::StatusOr<uint64_t> RecordsInSize(uint64_t size, const std::string& uri,
                                       const FixedLengthOptions& options) {
  if (size < options.header_bytes + options.footer_bytes) {
    return absl::DataLossError(
        fmt::format("{} has {} bytes, fewer than its header and footer ({} + {})", RedactUri(uri),
                    size, options.header_bytes, options.footer_bytes));
  }
  return (size - options.header_bytes - options.footer_bytes) / options.record_bytes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenFixedLengthFile(
    std::shared_ptr<ObjectStore> store, const std::string& uri, uint64_t file_index,
    const FixedLengthOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenFixedLengthFile: null store");
  DATAECHO_RETURN_IF_ERROR(CheckRecordBytes(options));
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                            internal::RecordInput::Open(*store, uri, options.compression,
                                                        options.buffer_size, options.read_ahead));
  uint64_t records = 0;
  if (!in->compressed()) {
    DATAECHO_ASSIGN_OR_RETURN(records, RecordsInSize(in->object_size(), uri, options));
  }
  return std::make_unique<FixedLengthFileReader>(std::move(in), file_index, options, records);
}

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenFixedLengthRange(
    std::shared_ptr<ObjectStore> store, const std::string& uri, const RecordRange& range,
    const FixedLengthOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenFixedLengthRange: null store");
  DATAECHO_RETURN_IF_ERROR(CheckRecordBytes(options));
  if (range.begin > range.end) {
    return absl::InvalidArgumentError(fmt::format("OpenFixedLengthRange: bad range [{}, {}) of {}",
                                                  range.begin, range.end, RedactUri(uri)));
  }
  if (internal::ResolveCompression(options.compression, uri) != Compression::kNone) {
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                              internal::RecordInput::Open(*store, uri, options.compression,
                                                          options.buffer_size, options.read_ahead));
    return std::make_unique<FixedLengthFileReader>(std::move(in), range.file, options, 0,
                                                   /*from_start=*/true, 0, range.begin, range.end);
  }
  // One ranged read of exactly the range's records. A file shorter than the
  // plan says ends the range early: DATA_LOSS "truncated record".
  const uint64_t offset = options.header_bytes + range.begin * options.record_bytes;
  const uint64_t length = range.size() * options.record_bytes;
  DATAECHO_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::RecordInput> in,
      internal::RecordInput::Open(*store, uri, options.compression, options.buffer_size,
                                  options.read_ahead, offset, length));
  return std::make_unique<FixedLengthFileReader>(std::move(in), range.file, options, UINT64_MAX,
                                                 /*from_start=*/false, range.begin, range.begin,
                                                 range.end);
}

absl::StatusOr<uint64_t> CountFixedLengthRecords(ObjectStore& store, const std::string& uri,
                                                 const FixedLengthOptions& options) {
  DATAECHO_RETURN_IF_ERROR(CheckRecordBytes(options));
  if (internal::ResolveCompression(options.compression, uri) == Compression::kNone) {
    DATAECHO_ASSIGN_OR_RETURN(ObjectInfo info, store.Stat(uri));
    return RecordsInSize(info.size, uri, options);
  }
  std::shared_ptr<ObjectStore> borrowed(&store, [](ObjectStore*) {});
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<RecordFileReader> reader,
                            OpenFixedLengthFile(borrowed, uri, 0, options));
  uint64_t n = 0;
  while (true) {
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> r, reader->Next());
    if (!r.has_value()) return n;
    ++n;
  }
}

StagePtr<Record> MakeFixedLengthRangeSource(std::shared_ptr<ObjectStore> store,
                                            std::vector<std::string> uris,
                                            std::vector<RecordRange> ranges,
                                            const FixedLengthOptions& options,
                                            const InterleaveOptions& interleave) {
  RecordRangeOpener open = [store, options](const std::string& uri, const RecordRange& range) {
    return OpenFixedLengthRange(store, uri, range, options);
  };
  return MakeRangeSource(std::move(uris), std::move(ranges), std::move(open), interleave,
                         "fixed_length_source");
}

StagePtr<Record> MakeFixedLengthSource(std::shared_ptr<ObjectStore> store,
                                       std::vector<std::string> uris,
                                       const FixedLengthOptions& options,
                                       const InterleaveOptions& interleave) {
  RecordFileOpener open = [store, options](const std::string& uri, uint64_t file_index) {
    return OpenFixedLengthFile(store, uri, file_index, options);
  };
  return MakeRecordSource(std::move(uris), std::move(open), interleave, "fixed_length_source");
}

absl::StatusOr<Example> FixedImageDecoder::operator()(const Record& record) const {
  const FixedImageLayout& l = layout_;
  if (l.label_bytes < 1 || l.label_index < 0 || l.label_index >= l.label_bytes || l.height <= 0 ||
      l.width <= 0 || l.channels <= 0) {
    return absl::InvalidArgumentError("FixedImageDecoder: bad layout");
  }
  const uint64_t pixels = static_cast<uint64_t>(l.height * l.width * l.channels);
  if (record.data.size() != static_cast<uint64_t>(l.label_bytes) + pixels) {
    return absl::DataLossError(fmt::format("record at {}:{} has {} bytes, layout needs {}",
                                           record.uri(), record.offset, record.data.size(),
                                           l.label_bytes + pixels));
  }
  const uint8_t* src = record.data.data() + l.label_bytes;
  Buffer image;
  if (l.channels_first && l.channels > 1) {
    MutableBuffer hwc(pixels);
    const int64_t plane = l.height * l.width;
    for (int64_t i = 0; i < plane; ++i) {
      for (int64_t c = 0; c < l.channels; ++c) hwc.data()[i * l.channels + c] = src[c * plane + i];
    }
    image = std::move(hwc).Freeze();
  } else {
    image = record.data.Slice(static_cast<size_t>(l.label_bytes), pixels);
  }
  DATAECHO_ASSIGN_OR_RETURN(
      Tensor t, Tensor::Make(DType::kUInt8, {l.height, l.width, l.channels}, std::move(image)));
  Example e;
  e.components.push_back(std::move(t));
  e.label = record.data.data()[l.label_index];
  e.source_index = record.source_index;
  e.repeat_index = record.repeat_index;
  e.epoch = record.epoch;
  return e;
}

}  // namespace dataecho
