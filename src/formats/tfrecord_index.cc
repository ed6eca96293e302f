// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/tfrecord_index.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/status/status.h"
#include "dataecho/crc32c.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/little_endian.h"
#include "formats/record_input.h"

namespace dataecho {
namespace {

using internal::LoadLE32;
using internal::LoadLE64;

// The payload length in a record header at `offset`, or DATA_LOSS.
absl::StatusOr<uint64_t> HeaderLength(const uint8_t* header, std::string_view uri, uint64_t offset,
                                      uint64_t max_record_bytes) {
  if (UnmaskCrc32c(LoadLE32(header + 8)) != Crc32c(header, 8)) {
    return absl::DataLossError(
        fmt::format("corrupted record at {}:{} (length CRC mismatch)", uri, offset));
  }
  const uint64_t length = LoadLE64(header);
  if (length > max_record_bytes) {
    return absl::DataLossError(fmt::format("corrupted record at {}:{} (length {} exceeds {})", uri,
                                           offset, length, max_record_bytes));
  }
  return length;
}

// "<a> <b>" (spaces, tabs, a trailing carriage return) into two numbers.
bool TwoNumbers(std::string_view line, uint64_t* a, uint64_t* b) {
  const char* p = line.data();
  const char* end = line.data() + line.size();
  auto blanks = [&] {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  };
  blanks();
  auto [after_a, ea] = std::from_chars(p, end, *a);
  if (ea != std::errc() || after_a == end || (*after_a != ' ' && *after_a != '\t')) return false;
  p = after_a;
  blanks();
  auto [after_b, eb] = std::from_chars(p, end, *b);
  if (eb != std::errc()) return false;
  p = after_b;
  blanks();
  return p == end;
}

absl::Status Truncated(std::string_view uri, uint64_t offset) {
  return absl::DataLossError(fmt::format("truncated record at {}:{}", uri, offset));
}

absl::StatusOr<TFRecordIndex> ScanStream(ObjectStore& store, const std::string& uri,
                                         const TFRecordReaderOptions& options) {
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                            internal::RecordInput::Open(store, uri, options.compression,
                                                        options.buffer_size, options.read_ahead));
  TFRecordIndex index;
  std::vector<uint8_t> scratch(size_t{64} << 10);
  while (true) {
    const uint64_t start = in->position();
    index.offsets.push_back(start);
    uint8_t header[kTFRecordHeaderBytes];
    DATAECHO_ASSIGN_OR_RETURN(size_t got, in->Read(header, sizeof(header)));
    if (got == 0) return index;
    if (got < sizeof(header)) return Truncated(*in->uri(), start);
    DATAECHO_ASSIGN_OR_RETURN(uint64_t length,
                              HeaderLength(header, *in->uri(), start, options.max_record_bytes));
    for (uint64_t left = length + kTFRecordFooterBytes; left > 0;) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(left, scratch.size()));
      DATAECHO_ASSIGN_OR_RETURN(got, in->Read(scratch.data(), want));
      if (got < want) return Truncated(*in->uri(), start);
      left -= got;
    }
  }
}

absl::StatusOr<TFRecordIndex> ScanHeaders(ObjectStore& store, const std::string& uri,
                                          const TFRecordReaderOptions& options) {
  if (internal::ResolveCompression(options.compression, uri) != Compression::kNone) {
    return absl::InvalidArgumentError(
        fmt::format("{} is compressed: its headers cannot be read in place (scan it as a stream)",
                    RedactUri(uri)));
  }
  DATAECHO_ASSIGN_OR_RETURN(ObjectInfo info, store.Stat(uri));
  const std::string shown = RedactUri(uri);
  TFRecordIndex index;
  uint64_t offset = 0;
  while (true) {
    index.offsets.push_back(offset);
    if (offset == info.size) return index;
    DATAECHO_ASSIGN_OR_RETURN(Buffer header, store.ReadRange(uri, offset, kTFRecordHeaderBytes));
    if (header.size() < kTFRecordHeaderBytes) return Truncated(shown, offset);
    DATAECHO_ASSIGN_OR_RETURN(uint64_t length,
                              HeaderLength(header.data(), shown, offset, options.max_record_bytes));
    const uint64_t next = offset + kTFRecordHeaderBytes + length + kTFRecordFooterBytes;
    if (next > info.size) return Truncated(shown, offset);
    offset = next;
  }
}

}  // namespace

absl::StatusOr<TFRecordIndex> ScanTFRecordIndex(ObjectStore& store, const std::string& uri,
                                                TFRecordScan scan,
                                                const TFRecordReaderOptions& options) {
  return scan == TFRecordScan::kHeaders ? ScanHeaders(store, uri, options)
                                        : ScanStream(store, uri, options);
}

std::string FormatTFRecordIndex(const TFRecordIndex& index) {
  std::string out;
  for (size_t i = 0; i + 1 < index.offsets.size(); ++i) {
    out += fmt::format("{} {}\n", index.offsets[i], index.offsets[i + 1] - index.offsets[i]);
  }
  return out;
}

absl::StatusOr<TFRecordIndex> ParseTFRecordIndex(std::string_view text, std::string_view uri) {
  TFRecordIndex index;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t eol = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(std::min(eol + 1, text.size()));
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    uint64_t offset = 0, bytes = 0;
    if (!TwoNumbers(line, &offset, &bytes) || bytes < kTFRecordHeaderBytes + kTFRecordFooterBytes ||
        offset > UINT64_MAX - bytes) {
      return absl::DataLossError(fmt::format("{}:{}: expected '<offset> <bytes>' of a record",
                                             RedactUri(uri), line_number));
    }
    if (!index.offsets.empty() && index.offsets.back() != offset) {
      return absl::DataLossError(
          fmt::format("{}:{}: record at {} does not follow the previous one (which ends at {})",
                      RedactUri(uri), line_number, offset, index.offsets.back()));
    }
    if (index.offsets.empty()) index.offsets.push_back(offset);
    index.offsets.push_back(offset + bytes);
  }
  if (index.offsets.empty()) index.offsets.push_back(0);  // an empty file
  return index;
}

absl::StatusOr<TFRecordIndex> ReadTFRecordIndex(ObjectStore& store, const std::string& index_uri) {
  DATAECHO_ASSIGN_OR_RETURN(Buffer text, store.ReadRange(index_uri, 0, UINT64_MAX));
  return ParseTFRecordIndex(
      std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), index_uri);
}

StagePtr<Record> MakeTFRecordRangeSource(std::shared_ptr<ObjectStore> store,
                                         std::vector<std::string> uris,
                                         std::vector<RecordRange> ranges,
                                         std::shared_ptr<const std::vector<TFRecordIndex>> indexes,
                                         const TFRecordReaderOptions& options,
                                         const InterleaveOptions& interleave) {
  auto budget = std::make_shared<CorruptionBudget>(options.max_skipped);
  RecordRangeOpener open = [store, indexes, options, budget](const std::string& uri,
                                                             const RecordRange& range) {
    const TFRecordIndex* index = nullptr;
    if (indexes != nullptr && range.file < indexes->size()) index = &(*indexes)[range.file];
    return OpenTFRecordRange(store, uri, range, index, options, budget);
  };
  return MakeRangeSource(std::move(uris), std::move(ranges), std::move(open), interleave,
                         "tfrecord_source", budget);
}

}  // namespace dataecho
