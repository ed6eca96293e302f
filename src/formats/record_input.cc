// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "formats/record_input.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "dataecho/crc32c.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"

namespace dataecho::internal {

Compression ResolveCompression(Compression c, std::string_view uri) {
  if (c != Compression::kAuto) return c;
  return uri.size() >= 3 && uri.substr(uri.size() - 3) == ".gz" ? Compression::kGzip
                                                                : Compression::kNone;
}

absl::StatusOr<std::unique_ptr<RecordInput>> RecordInput::Open(
    ObjectStore& store, const std::string& uri, Compression compression, size_t buffer_size,
    size_t read_ahead, uint64_t offset, uint64_t length) {
  compression = ResolveCompression(compression, uri);
  if (compression != Compression::kNone && offset != 0) {
    return absl::InvalidArgumentError(
        fmt::format("{} is compressed: it cannot be read from byte {} (only from the start)",
                    RedactUri(uri), offset));
  }
  ReadOptions ro;
  ro.read_ahead = read_ahead;
  ro.offset = offset;
  ro.length = length;
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> reader, store.Open(uri, ro));
  const uint64_t range_end = length > std::numeric_limits<uint64_t>::max() - offset
                                 ? std::numeric_limits<uint64_t>::max()
                                 : offset + length;
  // The stored bytes this stream can ever read: its buffers need be no
  // larger (a small file or a short range does not allocate and zero
  // `buffer_size` bytes per open; a size of 0 may mean "not stated").
  buffer_size = std::max<size_t>(buffer_size, 4096);
  const uint64_t stored_end = std::min(reader->info().size, range_end);
  const size_t stored_buffer =
      reader->info().size > 0 && stored_end > offset
          ? static_cast<size_t>(std::min<uint64_t>(buffer_size, stored_end - offset))
          : buffer_size;
  std::unique_ptr<RecordInput> in(new RecordInput(
      std::move(reader), std::make_shared<const std::string>(RedactUri(uri)), compression,
      compression == Compression::kNone ? stored_buffer : buffer_size, offset, range_end));
  if (in->compressed()) {
    in->in_.resize(stored_buffer);
    const int window_bits = in->compression_ == Compression::kGzip ? 15 + 16 : 15;
    if (inflateInit2(&in->z_, window_bits) != Z_OK) {
      return absl::ResourceExhaustedError(
          fmt::format("inflateInit2 failed for {}", RedactUri(uri)));
    }
    in->z_init_ = true;
  }
  return in;
}

RecordInput::RecordInput(std::unique_ptr<ObjectReader> reader,
                         std::shared_ptr<const std::string> uri, Compression compression,
                         size_t buffer_size, uint64_t offset, uint64_t range_end)
    : reader_(std::move(reader)),
      uri_(std::move(uri)),
      compression_(compression),
      buf_(buffer_size),
      position_(offset),
      range_end_(range_end),
      head_tracked_(offset == 0) {}

uint64_t RecordInput::max_stream_bytes() const {
  const uint64_t size = object_size();
  if (!compressed()) return std::min(size, range_end_);
  constexpr uint64_t kMaxDeflateRatio = 1032;
  if (size > UINT64_MAX / kMaxDeflateRatio - 1) return UINT64_MAX;
  return size * kMaxDeflateRatio + 1024;
}

RecordInput::~RecordInput() {
  if (z_init_) inflateEnd(&z_);
}

absl::StatusOr<size_t> RecordInput::Read(uint8_t* dst, size_t n) {
  size_t total = 0;
  while (total < n) {
    if (buf_pos_ < buf_len_) {
      const size_t k = std::min(n - total, buf_len_ - buf_pos_);
      std::memcpy(dst + total, buf_.data() + buf_pos_, k);
      buf_pos_ += k;
      total += k;
      continue;
    }
    if (eof_) break;
    if (!compressed() && n - total >= buf_.size()) {
      // Large reads go straight into the destination.
      const size_t want = n - total;
      DATAECHO_ASSIGN_OR_RETURN(size_t got, ReadStored(absl::MakeSpan(dst + total, want)));
      total += got;
      if (got < want) eof_ = true;
      break;
    }
    DATAECHO_RETURN_IF_ERROR(Refill());
  }
  position_ += total;
  return total;
}

absl::StatusOr<size_t> RecordInput::ReadStored(absl::Span<uint8_t> dst) {
  DATAECHO_ASSIGN_OR_RETURN(size_t got, reader_->Read(dst));
  if (head_tracked_ && head_seen_ < kHeadBytes) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(got, kHeadBytes - head_seen_));
    head_crc_ = Crc32cExtend(head_crc_, dst.data(), n);
    head_seen_ += n;
  }
  return got;
}

absl::Status RecordInput::Refill() {
  buf_pos_ = buf_len_ = 0;
  if (compressed()) return Inflate();
  DATAECHO_ASSIGN_OR_RETURN(size_t got, ReadStored(absl::MakeSpan(buf_)));
  buf_len_ = got;
  if (got < buf_.size()) eof_ = true;
  return absl::OkStatus();
}

absl::Status RecordInput::Inflate() {
  z_.next_out = buf_.data();
  z_.avail_out = static_cast<uInt>(buf_.size());
  while (z_.avail_out == buf_.size()) {
    if (z_.avail_in == 0 && !in_eof_) {
      DATAECHO_ASSIGN_OR_RETURN(size_t got, ReadStored(absl::MakeSpan(in_)));
      if (got < in_.size()) in_eof_ = true;
      z_.next_in = in_.data();
      z_.avail_in = static_cast<uInt>(got);
    }
    if (z_.avail_in == 0 && in_eof_) {
      if (member_ended_) {
        eof_ = true;
        break;
      }
      return absl::DataLossError(
          fmt::format("truncated compressed stream at {}:{}", *uri_, reader_->offset()));
    }
    if (member_ended_) {  // another gzip member (or zlib stream) follows
      if (inflateReset(&z_) != Z_OK) return absl::InternalError("inflateReset failed");
      member_ended_ = false;
    }
    const int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      member_ended_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return absl::DataLossError(fmt::format("corrupted compressed data at {}:{} ({})", *uri_,
                                             reader_->offset() - z_.avail_in,
                                             z_.msg != nullptr ? z_.msg : "inflate error"));
    }
  }
  buf_len_ = buf_.size() - z_.avail_out;
  return absl::OkStatus();
}

}  // namespace dataecho::internal
