// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// record.h: one record read from a file (a TFRecord payload, a fixed-length
// record), before decoding: the element type of record sources (formats/),
// beside Example and Batch (example.h).
//
// A `Record` carries its payload bytes (a Buffer of its own, never a view that
// pins a larger read buffer), where it came from (URI and byte offset of the
// record's first byte, for error messages) and a stable source index that
// names the record independently of timing, used to seed augmentations:
//
//   source_index = (file_index << 40) | index of the record in its file
//
// where file_index is the position of the file in the list given to the
// source. Decoders turn a Record into an Example and copy the indices (and
// the epoch) over.
//
// `crc32c` is the CRC-32C of the payload as read from the file when the
// reader has it for free (TFRecord stores one per record and checks it), else
// unset; `PayloadCrc32c()` gives it either way. A checkpoint's reference to a
// record carries that checksum, so a restore notices a file rewritten with
// other records of the same lengths (docs/checkpoint.md).
//
//   absl::StatusOr<std::optional<Record>> r = source->Next();
//   if (r.ok() && r->has_value()) {
//     std::string_view payload = (*r)->data.view();
//     fmt::print("{}:{}\n", (*r)->uri(), (*r)->offset);
//   }
//
// Thread safety: a value type; copies share payload bytes and the URI string.
#ifndef DATAECHO_RECORD_H_
#define DATAECHO_RECORD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dataecho/buffer.h"
#include "dataecho/crc32c.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"

namespace dataecho {

// Bits of Record::source_index that hold the record's index within its file.
inline constexpr int kRecordIndexBits = 40;

inline uint64_t MakeSourceIndex(uint64_t file_index, uint64_t record_in_file) {
  return (file_index << kRecordIndexBits) | record_in_file;
}

struct Record {
  Buffer data;  // the payload
  // URI of the file as it may be shown (RedactUri: no credentials), shared by
  // its records.
  std::shared_ptr<const std::string> source;
  uint64_t offset = 0;        // byte offset of the record in the (uncompressed) file
  uint64_t source_index = 0;  // see the file comment
  uint32_t repeat_index = 0;  // 0 = fresh, k = k-th echo
  uint32_t epoch = 0;         // pass over the files: 0 = the first (see repeat.h)
  // CRC-32C (unmasked) of `data` as read, if the reader knows it (see above).
  std::optional<uint32_t> crc32c;

  std::string_view uri() const { return source ? std::string_view(*source) : std::string_view(); }
  bool fresh() const { return repeat_index == 0; }
  // `crc32c` if set, else computed from the payload.
  uint32_t PayloadCrc32c() const { return crc32c ? *crc32c : Crc32c(data.data(), data.size()); }
};

template <>
struct ElementTraits<Record> {
  static size_t ByteSize(const Record& r) { return r.data.size(); }
  static int64_t FreshCount(const Record& r) { return r.fresh() ? 1 : 0; }
  static int64_t ItemCount(const Record&) { return 1; }
  static void MarkRepeat(Record& r, uint32_t k) { r.repeat_index = k; }
  static uint32_t Epoch(const Record& r) { return r.epoch; }
  static void SetEpoch(Record& r, uint32_t epoch) { r.epoch = epoch; }
};

}  // namespace dataecho

#endif  // DATAECHO_RECORD_H_
