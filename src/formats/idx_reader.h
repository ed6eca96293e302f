// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// idx_reader.h (internal): the reader of one IDX file's rows (idx.cc), shared
// by the record source and the image/label source (idx_source.cc).
#ifndef DATAECHO_SRC_FORMATS_IDX_READER_H_
#define DATAECHO_SRC_FORMATS_IDX_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "dataecho/formats/idx.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_input.h"
#include "formats/record_source_state.h"

namespace dataecho::internal {

// Not thread-safe, except Cancel().
class IdxFileReader final : public RecordFileReader, public FingerprintedReader {
 public:
  IdxFileReader(std::unique_ptr<RecordInput> in, IdxHeader header, uint64_t file_index)
      : in_(std::move(in)), header_(std::move(header)), file_index_(file_index) {}

  absl::StatusOr<std::optional<Record>> Next() override {
    if (done_) return std::nullopt;
    const uint64_t start = in_->position();
    if (row_ == header_.rows()) {
      done_ = true;
      uint8_t extra;
      DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(&extra, 1));
      if (got != 0) {
        return absl::DataLossError(fmt::format(
            "IDX file {} has bytes after its last row at offset {}", *in_->uri(), start));
      }
      return std::nullopt;
    }
    MutableBuffer row(header_.row_bytes);
    DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(row.data(), row.size()));
    if (got < row.size()) {
      done_ = true;
      return absl::DataLossError(fmt::format("truncated record at {}:{} (IDX row {} of {})",
                                             *in_->uri(), start, row_, header_.rows()));
    }
    return in_->MakeRecord(std::move(row), start, file_index_, row_++);
  }

  void Cancel() override { in_->Cancel(); }

  const IdxHeader& header() const { return header_; }
  const std::string& uri() const { return *in_->uri(); }

  // Where the file's head can be read if this stream did not read it.
  void SetStore(std::shared_ptr<ObjectStore> store, std::string uri) {
    fingerprint_.SetStore(std::move(store), std::move(uri));
  }
  std::optional<FileFingerprint> KnownFingerprint() const override {
    return fingerprint_.Known(in_->object_size(), in_->head_crc());
  }
  absl::StatusOr<FileFingerprint> Fingerprint() override {
    return fingerprint_.Get(in_->object_size(), in_->head_crc());
  }

 private:
  std::unique_ptr<RecordInput> in_;
  const IdxHeader header_;
  const uint64_t file_index_;
  uint64_t row_ = 0;
  bool done_ = false;
  StreamFingerprint fingerprint_;
};

// Opens `uri` and checks its header against the object's size (idx.h).
absl::StatusOr<std::unique_ptr<IdxFileReader>> OpenIdx(std::shared_ptr<ObjectStore> store,
                                                       const std::string& uri, uint64_t file_index,
                                                       const IdxOptions& options);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_IDX_READER_H_
