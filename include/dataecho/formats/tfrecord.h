// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/tfrecord.h: TFRecord files, read from any ObjectStore URI and written to
// local files.
//
// A TFRecord file is a sequence of records, each
//
//   uint64 length            (little-endian)
//   uint32 masked_crc32c(length bytes)
//   byte   data[length]
//   uint32 masked_crc32c(data)
//
// optionally compressed as a whole with GZIP or ZLIB (see crc32c.h for the
// mask). Reading:
//
//   std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
//   dataecho::TFRecordReaderOptions options;
//   options.skip_corrupt = true;
//   auto source = dataecho::MakeTFRecordSource(
//       store, {"gs://b/train-00000-of-00004", ...}, options);
//   // source is a Stage<Record>: decode it with a Map stage (image_record.h).
//
// Writing:
//
//   auto writer = dataecho::TFRecordWriter::Create("/data/train-00000.tfrecord");
//   if (!writer.ok()) return writer.status();
//   DATAECHO_RETURN_IF_ERROR((*writer)->Write(payload));
//   DATAECHO_RETURN_IF_ERROR((*writer)->Close());
//
// Error behaviour (all DATA_LOSS, naming the URI and the byte offset of the
// record's first byte in the uncompressed stream):
// - the end of the file at a record boundary ends the file cleanly;
// - a partial header, payload or footer: "truncated record at <uri>:<offset>";
// - a length or data CRC mismatch: "corrupted record at <uri>:<offset>";
// - a length above `max_record_bytes` or beyond the end of the object is
//   rejected before anything is allocated.
// With `skip_corrupt`, a bad data CRC skips that record and a bad length CRC
// (or an impossible length) skips the rest of that file (the reader cannot
// find the next record boundary, so it never spins); both count against the
// source's CorruptionBudget, which fails with DATA_LOSS once more than
// `max_skipped` regions were skipped. Truncation is an error in either mode.
//
// Thread safety: readers and writers are used by one thread at a time
// (reader Cancel() is thread-safe); sources are Stages (stage.h).
#ifndef DATAECHO_FORMATS_TFRECORD_H_
#define DATAECHO_FORMATS_TFRECORD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

// Bytes of framing around each record's payload: 8 + 4 before, 4 after.
inline constexpr size_t kTFRecordHeaderBytes = 12;
inline constexpr size_t kTFRecordFooterBytes = 4;

struct TFRecordReaderOptions {
  // Compression of each file; kAuto picks GZIP for URIs ending in ".gz".
  Compression compression = Compression::kNone;
  // Skip corrupt records instead of failing (see the file comment).
  bool skip_corrupt = false;
  // With skip_corrupt: skipped regions tolerated per source before DATA_LOSS.
  int64_t max_skipped = 1000;
  // Larger lengths are treated as corruption (checked before allocating).
  uint64_t max_record_bytes = uint64_t{1} << 30;
  // Read (and inflate) buffer per open file; a file or range with fewer
  // stored bytes gets a read buffer of their size.
  size_t buffer_size = size_t{256} << 10;
  // Read-ahead passed to ObjectStore::Open.
  size_t read_ahead = size_t{8} << 20;
};

// Opens one TFRecord file. `file_index` goes into each record's source_index;
// `budget` counts skipped records (REQUIRED if options.skip_corrupt; shared
// by all files of a source).
DATAECHO_EXPORT absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenTFRecordFile(
    std::shared_ptr<ObjectStore> store, const std::string& uri, uint64_t file_index,
    const TFRecordReaderOptions& options, std::shared_ptr<CorruptionBudget> budget = nullptr);

// A Stage<Record> over the records of `uris` (see record_source.h for
// interleaving). Stage name "tfrecord_source".
DATAECHO_EXPORT StagePtr<Record> MakeTFRecordSource(std::shared_ptr<ObjectStore> store,
                                                    std::vector<std::string> uris,
                                                    const TFRecordReaderOptions& options = {},
                                                    const InterleaveOptions& interleave = {});

// Appends one framed record holding `payload` to `out` (uncompressed).
DATAECHO_EXPORT void AppendTFRecord(std::string* out, std::string_view payload);

struct TFRecordWriterOptions {
  Compression compression = Compression::kNone;  // kAuto: by the path's suffix
  int compression_level = 6;                     // zlib level, 0-9
};

// Writes a TFRecord file to a local path. Not thread-safe.
class DATAECHO_EXPORT TFRecordWriter {
 public:
  // Creates (or truncates) `path`.
  static absl::StatusOr<std::unique_ptr<TFRecordWriter>> Create(
      const std::string& path, const TFRecordWriterOptions& options = {});
  // Closes the file if Close() was not called (errors are then lost).
  virtual ~TFRecordWriter() = default;

  virtual absl::Status Write(std::string_view payload) = 0;
  // Flushes and closes; reports any write error. Idempotent.
  virtual absl::Status Close() = 0;

  // Records written so far.
  virtual int64_t records() const = 0;
};

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_TFRECORD_H_
