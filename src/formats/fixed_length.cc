// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/fixed_length.h"

#include <utility>

#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_input.h"

namespace dataecho {
namespace {

class FixedLengthFileReader final : public RecordFileReader {
 public:
  FixedLengthFileReader(std::unique_ptr<internal::RecordInput> in, uint64_t file_index,
                        const FixedLengthOptions& options, uint64_t records)
      : in_(std::move(in)), file_index_(file_index), options_(options), records_(records) {}

  absl::StatusOr<std::optional<Record>> Next() override {
    if (done_) return std::nullopt;
    if (!skipped_header_) DATAECHO_RETURN_IF_ERROR(SkipHeader());
    const uint64_t start = in_->position();
    if (!in_->compressed() && index_ == records_) {
      done_ = true;
      if (in_->object_size() - options_.footer_bytes != start) return Truncated(start);
      return std::nullopt;
    }
    MutableBuffer data(static_cast<size_t>(options_.record_bytes));
    DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(data.data(), data.size()));
    if (got < data.size()) {
      done_ = true;
      if (in_->compressed() && got == options_.footer_bytes) return std::nullopt;
      return Truncated(start);
    }
    return in_->MakeRecord(std::move(data), start, file_index_, index_++);
  }

  void Cancel() override { in_->Cancel(); }

 private:
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
  uint64_t index_ = 0;
  bool skipped_header_ = false;
  bool done_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenFixedLengthFile(
    std::shared_ptr<ObjectStore> store, const std::string& uri, uint64_t file_index,
    const FixedLengthOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenFixedLengthFile: null store");
  if (options.record_bytes == 0 || options.record_bytes > FixedLengthOptions::kMaxRecordBytes) {
    return absl::InvalidArgumentError(
        fmt::format("record_bytes must be in 1..2^30, got {}", options.record_bytes));
  }
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                            internal::RecordInput::Open(*store, uri, options.compression,
                                                        options.buffer_size, options.read_ahead));
  uint64_t records = 0;
  if (!in->compressed()) {
    const uint64_t size = in->object_size();
    if (size < options.header_bytes + options.footer_bytes) {
      return absl::DataLossError(
          fmt::format("{} has {} bytes, fewer than its header and footer ({} + {})", RedactUri(uri),
                      size, options.header_bytes, options.footer_bytes));
    }
    records = (size - options.header_bytes - options.footer_bytes) / options.record_bytes;
  }
  return std::make_unique<FixedLengthFileReader>(std::move(in), file_index, options, records);
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
