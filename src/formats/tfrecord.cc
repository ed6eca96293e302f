// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/tfrecord.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "dataecho/crc32c.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/little_endian.h"
#include "formats/record_input.h"
#include "formats/record_source_base.h"
#include "formats/record_source_state.h"

namespace dataecho {
namespace {

// absl::string_view is not std::string_view in Debian's Abseil.
inline std::string_view Message(const absl::Status& s) {
  return {s.message().data(), s.message().size()};
}

using internal::LoadLE32;
using internal::LoadLE64;
using internal::StoreLE32;
using internal::StoreLE64;

// The bytes around a record's payload: its length and the length's masked
// CRC-32C before it, the payload's masked CRC-32C after it.
struct Framing {
  explicit Framing(std::string_view payload) {
    StoreLE64(header, payload.size());
    StoreLE32(header + 8, MaskCrc32c(Crc32c(header, 8)));
    StoreLE32(footer, MaskCrc32c(Crc32c(payload.data(), payload.size())));
  }
  uint8_t header[kTFRecordHeaderBytes];
  uint8_t footer[kTFRecordFooterBytes];
};

// What the first 4 bytes of a file that is not TFRecord look like, for the
// message: "; this looks like an IDX file: ..." or "".
std::string FormatHint(const uint8_t* p) {
  const bool idx_type = p[2] == 0x08 || p[2] == 0x09 || (p[2] >= 0x0B && p[2] <= 0x0E);
  if (p[0] == 0 && p[1] == 0 && idx_type && p[3] >= 1 && p[3] <= 16)
    return "; this looks like an IDX file: use --format=idx (MakeIdxRecordSource)";
  if (p[0] == 0x1f && p[1] == 0x8b) {
    return "; this looks like a gzip stream: use --compression=gzip (Compression::kGzip), and "
           "--format=idx if it holds an IDX file";
  }
  return "";
}

class TFRecordFileReader final : public RecordFileReader, public internal::FingerprintedReader {
 public:
  // Reads the records [skip_until, end_record) of a stream whose first record
  // is number `first_record` of its file (records before skip_until are read
  // and dropped).
  TFRecordFileReader(std::unique_ptr<internal::RecordInput> in, uint64_t file_index,
                     const TFRecordReaderOptions& options, std::shared_ptr<CorruptionBudget> budget,
                     uint64_t first_record = 0, uint64_t skip_until = 0,
                     uint64_t end_record = UINT64_MAX)
      : in_(std::move(in)),
        file_index_(file_index),
        options_(options),
        budget_(std::move(budget)),
        skip_until_(skip_until),
        end_record_(end_record),
        record_index_(first_record) {}

  absl::StatusOr<std::optional<Record>> Next() override {
    while (!done_ && record_index_ < end_record_) {
      const uint64_t start = in_->position();
      uint8_t header[kTFRecordHeaderBytes];
      DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(header, sizeof(header)));
      if (got == 0) {  // clean end at a record boundary
        if (end_record_ != UINT64_MAX) return RangeCutShort(start);
        break;
      }
      if (got < sizeof(header)) {
        return Truncated(start,
                         fmt::format("header{}", start == 0 && got >= 4 ? FormatHint(header) : ""));
      }
      const uint64_t length = LoadLE64(header);
      if (UnmaskCrc32c(LoadLE32(header + 8)) != Crc32c(header, 8)) {
        return SkipRestOfFile(
            start, fmt::format("length CRC mismatch{}", start == 0 ? FormatHint(header) : ""));
      }
      if (length > options_.max_record_bytes) {
        return SkipRestOfFile(start, fmt::format("length {} exceeds max_record_bytes {}", length,
                                                 options_.max_record_bytes));
      }
      if (length + kTFRecordFooterBytes >
          in_->max_stream_bytes() - std::min(in_->max_stream_bytes(), in_->position())) {
        return Truncated(start, fmt::format("payload of {} bytes", length));
      }
      MutableBuffer payload(static_cast<size_t>(length));
      DATAECHO_ASSIGN_OR_RETURN(got, in_->Read(payload.data(), payload.size()));
      if (got < length) return Truncated(start, fmt::format("payload of {} bytes", length));
      uint8_t footer[kTFRecordFooterBytes];
      DATAECHO_ASSIGN_OR_RETURN(got, in_->Read(footer, sizeof(footer)));
      if (got < sizeof(footer)) return Truncated(start, "footer");
      const uint64_t index = record_index_++;
      if (index < skip_until_) continue;  // before the range: read for its length only
      const uint32_t crc = Crc32c(payload.data(), payload.size());
      if (UnmaskCrc32c(LoadLE32(footer)) != crc) {
        absl::Status s = Corrupted(start, "data CRC mismatch");
        if (!options_.skip_corrupt) return s;
        DATAECHO_RETURN_IF_ERROR(budget_->Skip(Message(s)));
        continue;
      }
      Record record = in_->MakeRecord(std::move(payload), start, file_index_, index);
      record.crc32c = crc;
      return record;
    }
    done_ = true;
    return std::nullopt;
  }

  void Cancel() override { in_->Cancel(); }

  // Where the file's head can be read if this stream did not read it.
  void SetStore(std::shared_ptr<ObjectStore> store, std::string uri) {
    fingerprint_.SetStore(std::move(store), std::move(uri));
  }
  std::optional<internal::FileFingerprint> KnownFingerprint() const override {
    return fingerprint_.Known(in_->object_size(), in_->head_crc());
  }
  absl::StatusOr<internal::FileFingerprint> Fingerprint() override {
    return fingerprint_.Get(in_->object_size(), in_->head_crc());
  }

 private:
  absl::Status Truncated(uint64_t offset, std::string_view what) {
    done_ = true;
    return absl::DataLossError(
        fmt::format("truncated record at {}:{} (partial {})", *in_->uri(), offset, what));
  }
  // A range (end_record_ set) whose file ends, at a record boundary, before
  // the range's last record: never a silently short range.
  absl::Status RangeCutShort(uint64_t offset) {
    done_ = true;
    // A ranged read that starts past the end of the object stops at its end.
    if (!in_->compressed()) offset = std::min(offset, in_->object_size());
    return absl::DataLossError(
        fmt::format("record range [{}, {}) of {} is cut short: the file ends at {}:{}, before "
                    "record {} (it has fewer records than the range or its index says)",
                    skip_until_, end_record_, *in_->uri(), *in_->uri(), offset, record_index_));
  }
  absl::Status Corrupted(uint64_t offset, std::string_view why) {
    return absl::DataLossError(
        fmt::format("corrupted record at {}:{} ({})", *in_->uri(), offset, why));
  }
  // A bad header: the next record boundary is unknown, so the file ends here.
  absl::StatusOr<std::optional<Record>> SkipRestOfFile(uint64_t offset, std::string_view why) {
    done_ = true;
    absl::Status s = Corrupted(offset, why);
    if (!options_.skip_corrupt) return s;
    if (absl::Status b = budget_->Skip(fmt::format("{}; rest of file skipped", Message(s)));
        !b.ok())
      return b;
    return std::nullopt;
  }

  std::unique_ptr<internal::RecordInput> in_;
  const uint64_t file_index_;
  const TFRecordReaderOptions options_;
  const std::shared_ptr<CorruptionBudget> budget_;
  const uint64_t skip_until_;
  const uint64_t end_record_;
  uint64_t record_index_;
  bool done_ = false;
  internal::StreamFingerprint fingerprint_;
};

class FileWriter final : public TFRecordWriter {
 public:
  FileWriter(FILE* f, std::string path, Compression compression, int level)
      : file_(f), path_(std::move(path)), compression_(compression), level_(level) {}
  ~FileWriter() override { (void)Close(); }

  absl::Status Init() {
    std::setvbuf(file_, nullptr, _IOFBF, size_t{1} << 20);
    if (compression_ == Compression::kNone) return absl::OkStatus();
    const int bits = compression_ == Compression::kGzip ? 15 + 16 : 15;
    if (deflateInit2(&z_, level_, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return absl::InvalidArgumentError(
          fmt::format("deflateInit2 failed for {} (level {})", path_, level_));
    }
    z_init_ = true;
    out_.resize(size_t{256} << 10);
    return absl::OkStatus();
  }

  absl::Status Write(std::string_view payload) override {
    if (file_ == nullptr) return absl::FailedPreconditionError(fmt::format("{} is closed", path_));
    const Framing f(payload);
    DATAECHO_RETURN_IF_ERROR(Put(f.header, sizeof(f.header)));
    DATAECHO_RETURN_IF_ERROR(Put(payload.data(), payload.size()));
    DATAECHO_RETURN_IF_ERROR(Put(f.footer, sizeof(f.footer)));
    ++records_;
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (file_ == nullptr) return status_;
    if (z_init_) {
      if (status_.ok()) status_ = Deflate(nullptr, 0, Z_FINISH);
      deflateEnd(&z_);
      z_init_ = false;
    }
    if (std::fclose(file_) != 0 && status_.ok()) status_ = Errno("close");
    file_ = nullptr;
    return status_;
  }

  int64_t records() const override { return records_; }

 private:
  absl::Status Put(const void* data, size_t n) {
    if (!status_.ok()) return status_;
    if (z_init_) {
      status_ = Deflate(data, n, Z_NO_FLUSH);
    } else if (n > 0 && std::fwrite(data, 1, n, file_) != n) {
      status_ = Errno("write");
    }
    return status_;
  }

  absl::Status Deflate(const void* data, size_t n, int flush) {
    z_.next_in = static_cast<Bytef*>(const_cast<void*>(data));
    z_.avail_in = static_cast<uInt>(n);
    int rc;
    do {
      z_.next_out = out_.data();
      z_.avail_out = static_cast<uInt>(out_.size());
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR)
        return absl::InternalError(fmt::format("deflate failed for {}", path_));
      const size_t have = out_.size() - z_.avail_out;
      if (have > 0 && std::fwrite(out_.data(), 1, have, file_) != have) return Errno("write");
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return absl::OkStatus();
  }

  absl::Status Errno(std::string_view op) {
    return absl::ErrnoToStatus(errno, fmt::format("{} {}", op, path_));
  }

  FILE* file_;
  const std::string path_;
  const Compression compression_;
  const int level_;
  absl::Status status_;
  int64_t records_ = 0;
  z_stream z_{};
  bool z_init_ = false;
  std::vector<uint8_t> out_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenTFRecordFile(
    std::shared_ptr<ObjectStore> store, const std::string& uri, uint64_t file_index,
    const TFRecordReaderOptions& options, std::shared_ptr<CorruptionBudget> budget) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenTFRecordFile: null store");
  if (budget == nullptr) budget = std::make_shared<CorruptionBudget>(options.max_skipped);
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                            internal::RecordInput::Open(*store, uri, options.compression,
                                                        options.buffer_size, options.read_ahead));
  auto reader =
      std::make_unique<TFRecordFileReader>(std::move(in), file_index, options, std::move(budget));
  reader->SetStore(std::move(store), uri);
  return reader;
}

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenTFRecordRange(
    std::shared_ptr<ObjectStore> store, const std::string& uri, const RecordRange& range,
    const TFRecordIndex* index, const TFRecordReaderOptions& options,
    std::shared_ptr<CorruptionBudget> budget) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenTFRecordRange: null store");
  if (range.begin > range.end) {
    return absl::InvalidArgumentError(fmt::format("OpenTFRecordRange: bad range [{}, {}) of {}",
                                                  range.begin, range.end, RedactUri(uri)));
  }
  if (budget == nullptr) budget = std::make_shared<CorruptionBudget>(options.max_skipped);
  const bool ranged = index != nullptr && !index->offsets.empty() &&
                      internal::ResolveCompression(options.compression, uri) == Compression::kNone;
  if (ranged && range.end > index->records()) {
    return absl::InvalidArgumentError(
        fmt::format("records [{}, {}) of {}: its index has {} records", range.begin, range.end,
                    RedactUri(uri), index->records()));
  }
  uint64_t offset = 0, length = UINT64_MAX, first = 0;
  if (ranged) {  // exactly the bytes of the range's records
    offset = index->offsets[range.begin];
    length = index->offsets[range.end] - offset;
    first = range.begin;
  }
  DATAECHO_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::RecordInput> in,
      internal::RecordInput::Open(*store, uri, options.compression, options.buffer_size,
                                  options.read_ahead, offset, length));
  auto reader = std::make_unique<TFRecordFileReader>(
      std::move(in), range.file, options, std::move(budget), first, range.begin, range.end);
  reader->SetStore(std::move(store), uri);
  return reader;
}

StagePtr<Record> MakeTFRecordSource(std::shared_ptr<ObjectStore> store,
                                    std::vector<std::string> uris,
                                    const TFRecordReaderOptions& options,
                                    const InterleaveOptions& interleave) {
  auto budget = std::make_shared<CorruptionBudget>(options.max_skipped);
  RecordFileOpener open = [store, options, budget](const std::string& uri, uint64_t file_index) {
    return OpenTFRecordFile(store, uri, file_index, options, budget);
  };
  // A restore reads the records it needs with ranged reads (not in a
  // compressed file: that one inflates from its start).
  internal::RecordRangeOpener open_range;
  open_range.ranged = [options](const std::string& uri) {
    return internal::ResolveCompression(options.compression, uri) == Compression::kNone;
  };
  open_range.open = [store, options, budget](
                        const std::string& uri, uint64_t file_index, uint64_t offset,
                        uint64_t first_record,
                        size_t read_ahead) -> absl::StatusOr<std::unique_ptr<RecordFileReader>> {
    DATAECHO_ASSIGN_OR_RETURN(
        std::unique_ptr<internal::RecordInput> in,
        internal::RecordInput::Open(*store, uri, options.compression,
                                    read_ahead > 0
                                        ? std::min(options.buffer_size, internal::kRangeRefillBytes)
                                        : options.buffer_size,
                                    read_ahead > 0 ? read_ahead : options.read_ahead, offset));
    auto reader = std::make_unique<TFRecordFileReader>(std::move(in), file_index, options, budget,
                                                       first_record);
    reader->SetStore(store, uri);
    return reader;
  };
  return internal::MakeRangedRecordSource(std::move(uris), std::move(open), std::move(open_range),
                                          interleave, "tfrecord_source", budget);
}

void AppendTFRecord(std::string* out, std::string_view payload) {
  const Framing f(payload);
  out->append(reinterpret_cast<const char*>(f.header), sizeof(f.header));
  out->append(payload);
  out->append(reinterpret_cast<const char*>(f.footer), sizeof(f.footer));
}

absl::StatusOr<std::unique_ptr<TFRecordWriter>> TFRecordWriter::Create(
    const std::string& path, const TFRecordWriterOptions& options) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::ErrnoToStatus(errno, fmt::format("create {}", path));
  auto w = std::make_unique<FileWriter>(
      f, path, internal::ResolveCompression(options.compression, path), options.compression_level);
  DATAECHO_RETURN_IF_ERROR(w->Init());
  return w;
}

}  // namespace dataecho
