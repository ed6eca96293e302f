// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// record_input.h (internal): a buffered, optionally inflating byte stream over
// one object, used by every record reader.
#ifndef DATAECHO_SRC_FORMATS_RECORD_INPUT_H_
#define DATAECHO_SRC_FORMATS_RECORD_INPUT_H_

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dataecho/buffer.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/record.h"
#include "dataecho/storage/object_store.h"

namespace dataecho::internal {

// The compression `c` means for `uri` (resolves kAuto).
Compression ResolveCompression(Compression c, std::string_view uri);

// Not thread-safe, except Cancel().
class RecordInput {
 public:
  // Opens `uri` from `store`. `buffer_size` is the size of the read (and
  // inflate) buffer; `read_ahead` is passed to ObjectStore::Open. The stream
  // covers bytes [offset, offset + length) of an uncompressed object (a
  // ranged read; position() starts at `offset`); a compressed stream can only
  // start at 0 (INVALID_ARGUMENT otherwise).
  static absl::StatusOr<std::unique_ptr<RecordInput>> Open(
      ObjectStore& store, const std::string& uri, Compression compression, size_t buffer_size,
      size_t read_ahead, uint64_t offset = 0,
      uint64_t length = std::numeric_limits<uint64_t>::max());
  ~RecordInput();

  // Reads up to `n` bytes into `dst`; fewer only at the end of the stream.
  absl::StatusOr<size_t> Read(uint8_t* dst, size_t n);

  // Bytes of the (uncompressed) stream returned so far.
  uint64_t position() const { return position_; }
  // The URI, shared with the records read from it.
  const std::shared_ptr<const std::string>& uri() const { return uri_; }
  // Size of the stored object (compressed size for a compressed stream).
  uint64_t object_size() const { return reader_->info().size; }
  bool compressed() const { return compression_ != Compression::kNone; }
  // An upper bound on the stream's (uncompressed) end: the end of the range
  // read (at most the object size), or for a compressed object the most
  // deflate can expand it (1032:1). Lets readers reject impossible lengths
  // before allocating them.
  uint64_t max_stream_bytes() const;

  // The record `data` that starts at stream position `offset`, record `index`
  // of the file numbered `file_index` (Record::source_index).
  Record MakeRecord(MutableBuffer data, uint64_t offset, uint64_t file_index,
                    uint64_t index) const {
    Record r;
    r.data = std::move(data).Freeze();
    r.source = uri_;
    r.offset = offset;
    r.source_index = MakeSourceIndex(file_index, index);
    return r;
  }

  // The CRC-32C of the object's first min(size, kHeadBytes) stored bytes
  // (compressed bytes for a compressed stream), once this stream, read from
  // byte 0, has passed them; std::nullopt before, or for a ranged read that
  // started later. (A file's fingerprint in a pipeline state.)
  static constexpr uint64_t kHeadBytes = 4096;
  std::optional<uint32_t> head_crc() const {
    if (!head_tracked_ || head_seen_ < std::min(kHeadBytes, object_size())) return std::nullopt;
    return head_crc_;
  }

  // Thread-safe.
  void Cancel() { reader_->Cancel(); }

 private:
  RecordInput(std::unique_ptr<ObjectReader> reader, std::shared_ptr<const std::string> uri,
              Compression compression, size_t buffer_size, uint64_t offset, uint64_t range_end);
  absl::Status Refill();
  absl::Status Inflate();
  // reader_->Read(), noting the head's CRC (head_crc()).
  absl::StatusOr<size_t> ReadStored(absl::Span<uint8_t> dst);

  std::unique_ptr<ObjectReader> reader_;
  const std::shared_ptr<const std::string> uri_;
  const Compression compression_;
  std::vector<uint8_t> buf_;  // decoded bytes [buf_pos_, buf_len_) not yet returned
  size_t buf_pos_ = 0;
  size_t buf_len_ = 0;
  bool eof_ = false;
  uint64_t position_ = 0;
  const uint64_t range_end_;  // offset + length of the ranged read (saturated)
  const bool head_tracked_;   // the stream starts at the object's byte 0
  uint64_t head_seen_ = 0;    // stored bytes of the head read so far
  uint32_t head_crc_ = 0;     // their CRC-32C
  // Compressed streams only.
  std::vector<uint8_t> in_;
  z_stream z_{};
  bool z_init_ = false;
  bool in_eof_ = false;
  bool member_ended_ = false;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_RECORD_INPUT_H_
