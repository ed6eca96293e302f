// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/fixed_length.h: files of fixed-length records (e.g. CIFAR-10's binary
// version: each record is 1 label byte + 3,072 pixel bytes, 3x32x32 planar).
//
//   auto source = dataecho::MakeFixedLengthSource(store, uris, {.record_bytes = 3073});
//   dataecho::FixedImageDecoder decode({});   // CIFAR-10 defaults
//   absl::StatusOr<dataecho::Example> ex = decode(record);   // uint8 [32, 32, 3], label
//
// A file may start with `header_bytes` and end with `footer_bytes` that are
// not records. If the bytes between do not divide into whole records, the
// complete records come first, then DATA_LOSS "truncated record at
// <uri>:<offset>" for the partial one. Compressed files are read as a
// stream; there the end is recognized when exactly `footer_bytes` remain.
//
// Thread safety: readers are used by one thread at a time (Cancel() is
// thread-safe); sources are Stages; FixedImageDecoder is immutable and
// thread-safe.
#ifndef DATAECHO_FORMATS_FIXED_LENGTH_H_
#define DATAECHO_FORMATS_FIXED_LENGTH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/storage/epoch_plan.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

struct FixedLengthOptions {
  // The largest record_bytes (1 GiB): a record is one allocation.
  static constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 30;

  uint64_t record_bytes = 0;  // REQUIRED, 1..kMaxRecordBytes
  uint64_t header_bytes = 0;  // skipped at the start of each file
  uint64_t footer_bytes = 0;  // ignored at the end of each file
  Compression compression = Compression::kNone;
  size_t buffer_size = size_t{256} << 10;  // read (and inflate) buffer per file, at most
  size_t read_ahead = size_t{8} << 20;     // passed to ObjectStore::Open
};

// Reads one file's records (offset = the record's byte offset in the file).
DATAECHO_EXPORT absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenFixedLengthFile(
    std::shared_ptr<ObjectStore> store, const std::string& uri, uint64_t file_index,
    const FixedLengthOptions& options);

// A Stage<Record> over `uris` ("fixed_length_source").
DATAECHO_EXPORT StagePtr<Record> MakeFixedLengthSource(std::shared_ptr<ObjectStore> store,
                                                       std::vector<std::string> uris,
                                                       const FixedLengthOptions& options,
                                                       const InterleaveOptions& interleave = {});

// Records [range.begin, range.end) of a fixed-length file: one ranged read of
// exactly their bytes if uncompressed, else read from the start. A file with
// fewer records than the range: DATA_LOSS naming the file and offset
// ("truncated record", or for a compressed file "record range ... is cut short").
DATAECHO_EXPORT absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenFixedLengthRange(
    std::shared_ptr<ObjectStore> store, const std::string& uri, const RecordRange& range,
    const FixedLengthOptions& options);

// The number of whole records of a fixed-length file: from its size (one Stat)
// if uncompressed, else by reading it.
DATAECHO_EXPORT absl::StatusOr<uint64_t> CountFixedLengthRecords(ObjectStore& store,
                                                                 const std::string& uri,
                                                                 const FixedLengthOptions& options);

// A source over `ranges` of fixed-length files ("fixed_length_source").
DATAECHO_EXPORT StagePtr<Record> MakeFixedLengthRangeSource(
    std::shared_ptr<ObjectStore> store, std::vector<std::string> uris,
    std::vector<RecordRange> ranges, const FixedLengthOptions& options,
    const InterleaveOptions& interleave = {});

struct FixedImageLayout {
  int64_t label_bytes = 1;  // bytes before the pixels (CIFAR-100: 2)
  int64_t label_index = 0;  // which of them is the label (CIFAR-100 fine label: 1)
  int64_t height = 32;
  int64_t width = 32;
  int64_t channels = 3;
  bool channels_first = true;  // pixels stored CHW (planar, as CIFAR); output is always HWC
};

// Decodes a labelled image record into an Example (uint8 [H, W, C]); DATA_LOSS
// naming the record if its size is not label_bytes + H*W*C.
class DATAECHO_EXPORT FixedImageDecoder {
 public:
  explicit FixedImageDecoder(FixedImageLayout layout) : layout_(layout) {}
  absl::StatusOr<Example> operator()(const Record& record) const;

 private:
  FixedImageLayout layout_;
};

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_FIXED_LENGTH_H_
