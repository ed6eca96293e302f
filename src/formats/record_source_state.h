// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/record_source_state.h: the checkpoint half of the record sources
// (record_source.cc): references to records, the files' fingerprints, and
// reading the records again (record_reread.cc). Not part of the public API.
#ifndef DATAECHO_SRC_FORMATS_RECORD_SOURCE_STATE_H_
#define DATAECHO_SRC_FORMATS_RECORD_SOURCE_STATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "dataecho/checkpoint.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/storage/object_store.h"

namespace dataecho::internal {

// What a state keeps of a file to notice that it changed: its stored size and
// the CRC-32C of its first min(size, 4096) stored bytes. Portable (no mtime,
// inode or ETag): a copy of the files elsewhere restores.
struct FileFingerprint {
  uint64_t size = 0;
  uint32_t head_crc = 0;
  bool operator==(const FileFingerprint&) const = default;
};

// Implemented by the readers that can give their file's fingerprint (the
// TFRecord reader), next to RecordFileReader.
class FingerprintedReader {
 public:
  virtual ~FingerprintedReader() = default;
  // May read the file's head (one small ranged read) if the reader has not.
  virtual absl::StatusOr<FileFingerprint> Fingerprint() = 0;
  // The fingerprint if it costs no I/O (the reader passed the head), else
  // std::nullopt. What a source keeps while it reads, and what a save writes.
  virtual std::optional<FileFingerprint> KnownFingerprint() const = 0;
};

// How a reader of one stream gets its file's fingerprint (TFRecord and IDX
// readers implement FingerprintedReader with it): free once the stream, read
// from byte 0, passed the head (`stream_head`: RecordInput::head_crc()), else
// one ranged read of the head from the store (once).
class StreamFingerprint {
 public:
  // Where the head can be read if the stream did not read it.
  void SetStore(std::shared_ptr<ObjectStore> store, std::string uri) {
    store_ = std::move(store);
    uri_ = std::move(uri);
  }
  std::optional<FileFingerprint> Known(uint64_t size, std::optional<uint32_t> stream_head) const;
  absl::StatusOr<FileFingerprint> Get(uint64_t size, std::optional<uint32_t> stream_head);

 private:
  std::shared_ptr<ObjectStore> store_;
  std::string uri_;
  std::optional<uint32_t> head_crc_;  // read by Get()
};

// `reader`'s fingerprint, std::nullopt if its format gives none (may read the
// head: at restore).
absl::StatusOr<std::optional<FileFingerprint>> FingerprintOf(RecordFileReader& reader);
// `reader`'s fingerprint if it costs no I/O, else std::nullopt.
std::optional<FileFingerprint> KnownFingerprintOf(const RecordFileReader& reader);

// How a format reads a file from an offset (the restore of a state reads
// only the records it needs). Empty: the files are read from their starts.
struct RecordRangeOpener {
  // Whether `uri` can be read from an offset (not a compressed file). No I/O.
  std::function<bool(const std::string& uri)> ranged;
  // Opens file `file_index` at `uri` at byte `offset`, where record number
  // `first_record` of the file starts, reading ahead about `read_ahead` bytes
  // (0: the format's default). With `read_ahead` > 0 (a restore reading the
  // records within about that many bytes of `offset`), the reader's own
  // buffer refills stay small (kRangeRefillBytes), so that they do not reach
  // far past it: a remote store would fetch another chunk for them.
  std::function<absl::StatusOr<std::unique_ptr<RecordFileReader>>(
      const std::string& uri, uint64_t file_index, uint64_t offset, uint64_t first_record,
      size_t read_ahead)>
      open;
  explicit operator bool() const { return ranged && open; }
};

// The buffer of a reader opened by RecordRangeOpener::open with a read-ahead.
inline constexpr size_t kRangeRefillBytes = size_t{16} << 10;

// The fingerprints of the files a source has read, by file index.
using Fingerprints = absl::flat_hash_map<uint64_t, FileFingerprint>;

// A file's fingerprint in a state (version 3 on): present or not, then its fields.
void SaveFingerprint(const std::optional<FileFingerprint>& fp, StateWriter& w);
std::optional<FileFingerprint> RestoreFingerprint(StateReader& r);

// DATA_LOSS naming `uri` unless `reader`'s file still has the fingerprint
// `saved` (nothing to check if std::nullopt, or if the reader gives none).
absl::Status CheckFingerprint(RecordFileReader& reader, const std::optional<FileFingerprint>& saved,
                              const std::string& uri);

// Writes, for a state of version 3 on, the files of `items` with their
// fingerprints (those of `known`), then per record (source_index, offset,
// epoch, CRC-32C of the payload).
void SaveRecordRefs(std::span<const Record* const> items, const Fingerprints& known,
                    StateWriter& w);

// Reads `n` references and the records they name; appends them in the
// references' order, stamped with their epochs. Each file's fingerprint is
// checked once. With `open_range`, the records are read with ranged reads
// grouped by file (nearby records share one read), several at once; a file
// that cannot be read from an offset (compressed), or every file without
// `open_range`, is read from its start up to its last needed record.
// DATA_LOSS (naming the file and offset) if a record is not where it was or,
// for a state of version 2 on, does not have the same payload CRC-32C.
absl::Status RereadRecords(StateReader& r, size_t n, const std::vector<std::string>& uris,
                           const RecordFileOpener& open, const RecordRangeOpener& open_range,
                           std::vector<Record>* out);

// Reads and drops the first `n` records of `reader` (the records the consumer
// had of a file when its state was saved). DATA_LOSS if the file has fewer,
// or if `last_crc` is given and the n-th record's payload CRC-32C differs.
// `*last` (if not null) gets the n-th record.
// When the file has fewer records and `fingerprint` is given, the file's
// fingerprint is checked first: a file that changed is reported as such (its
// size, its head), not as a count of records.
absl::Status SkipRecords(RecordFileReader& reader, uint64_t n, const std::string& uri,
                         std::optional<uint32_t> last_crc = std::nullopt, Record* last = nullptr,
                         const std::optional<FileFingerprint>& fingerprint = std::nullopt);

// DATA_LOSS: record `index` of `uri` is where the state says, but its bytes
// are not those the state was saved with.
absl::Status ContentsChanged(const std::string& uri, uint64_t index, const Record& rec,
                             uint32_t saved_crc);

// The index of a record in its file (the low bits of its source_index).
inline uint64_t IndexInFile(uint64_t source_index) {
  return source_index & ((uint64_t{1} << kRecordIndexBits) - 1);
}

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_RECORD_SOURCE_STATE_H_
