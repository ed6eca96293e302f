// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/idx.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/idx_reader.h"
#include "formats/record_input.h"

namespace dataecho {
namespace {

// Rows larger than this are treated as a lying header (checked before allocating).
constexpr uint64_t kMaxRowBytes = uint64_t{1} << 30;

uint32_t LoadBE32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

int ElementSize(uint8_t type) {
  switch (type) {
    case 0x08:
    case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C:
    case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

}  // namespace

namespace internal {

absl::StatusOr<std::unique_ptr<IdxFileReader>> OpenIdx(std::shared_ptr<ObjectStore> store,
                                                       const std::string& uri, uint64_t file_index,
                                                       const IdxOptions& options) {
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                            internal::RecordInput::Open(*store, uri, options.compression,
                                                        options.buffer_size, options.read_ahead));
  const std::string shown = RedactUri(uri);  // in messages
  std::string head(4, '\0');
  DATAECHO_ASSIGN_OR_RETURN(size_t got, in->Read(reinterpret_cast<uint8_t*>(head.data()), 4));
  head.resize(got);
  if (head.size() == 4) {
    const size_t dims_bytes = 4 * static_cast<size_t>(static_cast<uint8_t>(head[3]));
    head.resize(4 + dims_bytes);
    DATAECHO_ASSIGN_OR_RETURN(got,
                              in->Read(reinterpret_cast<uint8_t*>(head.data()) + 4, dims_bytes));
    head.resize(4 + got);
  }
  DATAECHO_ASSIGN_OR_RETURN(IdxHeader header, ParseIdxHeader(head, shown));
  if (header.type != 0x08) {
    return absl::UnimplementedError(fmt::format(
        "IDX file {} has element type 0x{:02x}; only unsigned bytes (0x08) are supported", shown,
        header.type));
  }
  const uint64_t want = header.header_bytes + header.data_bytes;
  const std::string dims = absl::StrJoin(header.dims, "x");
  if (!in->compressed()) {
    if (in->object_size() != want) {
      return absl::DataLossError(
          fmt::format("IDX header of {} describes {} bytes ({} elements), object has {}", shown,
                      want, dims, in->object_size()));
    }
  } else if (internal::ResolveCompression(options.compression, uri) == Compression::kGzip) {
    // The gzip trailer's ISIZE: the uncompressed size mod 2^32.
    const uint64_t size = in->object_size();
    DATAECHO_ASSIGN_OR_RETURN(Buffer trailer, size >= 4 ? store->ReadRange(uri, size - 4, 4)
                                                        : absl::StatusOr<Buffer>(Buffer()));
    if (trailer.size() != 4)
      return absl::DataLossError(fmt::format("truncated gzip stream {}", shown));
    const uint8_t* p = trailer.data();
    const uint32_t isize =
        uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    if (isize != static_cast<uint32_t>(want)) {
      return absl::DataLossError(fmt::format(
          "IDX header of {} describes {} bytes ({} elements), gzip trailer records {} (mod 2^32)",
          shown, want, dims, isize));
    }
  }
  if (want > in->max_stream_bytes()) {
    return absl::DataLossError(
        fmt::format("IDX header of {} describes {} bytes ({} elements), more than its {} "
                    "compressed bytes can hold",
                    shown, want, dims, in->object_size()));
  }
  if (header.row_bytes == 0 && header.rows() > 0) {
    // [N, 0, ...]: N empty rows, a header that costs N reads and holds nothing.
    return absl::DataLossError(fmt::format("IDX file {} has {} rows of zero bytes ({} elements)",
                                           shown, header.rows(), dims));
  }
  if (header.row_bytes > kMaxRowBytes) {
    return absl::DataLossError(fmt::format("IDX file {} has rows of {} bytes (limit {})", shown,
                                           header.row_bytes, kMaxRowBytes));
  }
  auto reader = std::make_unique<IdxFileReader>(std::move(in), std::move(header), file_index);
  reader->SetStore(std::move(store), uri);
  return reader;
}

}  // namespace internal

absl::StatusOr<IdxHeader> ParseIdxHeader(std::string_view bytes, std::string_view uri) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 4) return absl::DataLossError(fmt::format("truncated IDX header in {}", uri));
  if (p[0] != 0 || p[1] != 0) {
    return absl::DataLossError(fmt::format("{} is not an IDX file (magic {:02x}{:02x}{:02x}{:02x})",
                                           uri, p[0], p[1], p[2], p[3]));
  }
  IdxHeader h;
  h.type = p[2];
  const int elem = ElementSize(h.type);
  if (elem == 0)
    return absl::DataLossError(
        fmt::format("{} has unknown IDX element type 0x{:02x}", uri, h.type));
  const size_t ndims = p[3];
  if (ndims == 0) return absl::DataLossError(fmt::format("IDX file {} has no dimensions", uri));
  h.header_bytes = 4 + 4 * ndims;
  if (bytes.size() < h.header_bytes)
    return absl::DataLossError(fmt::format("truncated IDX header in {}", uri));
  uint64_t row = static_cast<uint64_t>(elem);
  for (size_t i = 0; i < ndims; ++i) {
    h.dims.push_back(LoadBE32(p + 4 + 4 * i));
    if (i > 0 && __builtin_mul_overflow(row, uint64_t{h.dims.back()}, &row)) {
      return absl::DataLossError(fmt::format("IDX dimensions of {} overflow", uri));
    }
  }
  h.row_bytes = row;
  if (__builtin_mul_overflow(uint64_t{h.dims[0]}, row, &h.data_bytes) ||
      h.data_bytes > UINT64_MAX - h.header_bytes) {
    return absl::DataLossError(fmt::format("IDX dimensions of {} overflow", uri));
  }
  return h;
}

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenIdxFile(std::shared_ptr<ObjectStore> store,
                                                              const std::string& uri,
                                                              uint64_t file_index,
                                                              const IdxOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenIdxFile: null store");
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::IdxFileReader> r,
                            internal::OpenIdx(store, uri, file_index, options));
  return std::unique_ptr<RecordFileReader>(std::move(r));
}

absl::StatusOr<IdxHeader> ReadIdxHeader(std::shared_ptr<ObjectStore> store, const std::string& uri,
                                        const IdxOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("ReadIdxHeader: null store");
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::IdxFileReader> r,
                            internal::OpenIdx(std::move(store), uri, 0, options));
  return r->header();
}

StagePtr<Record> MakeIdxRecordSource(std::shared_ptr<ObjectStore> store,
                                     std::vector<std::string> uris, const IdxOptions& options,
                                     const InterleaveOptions& interleave) {
  RecordFileOpener open = [store, options](const std::string& uri, uint64_t file_index) {
    return OpenIdxFile(store, uri, file_index, options);
  };
  return MakeRecordSource(std::move(uris), std::move(open), interleave, "idx_source");
}

}  // namespace dataecho
