// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/idx.h: IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed.
//
// An IDX file is a big-endian header -- two zero bytes, a type byte (0x08 =
// unsigned byte), the number of dimensions, then each dimension as a uint32
// -- followed by the elements in row-major order. MNIST-style datasets come
// as two files, images [N, 28, 28] and labels [N]; `MakeIdxSource()` zips
// them into Examples:
//
//   auto store = std::shared_ptr<dataecho::ObjectStore>(dataecho::OpenObjectStore());
//   auto source = dataecho::MakeIdxSource(store,
//       "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
//       "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz");
//   // Example: uint8 [28, 28, 1] image, label 0..9, source_index = row
//
// The header is validated before any row is read: the dimensions' product
// must not overflow and must match the object's size (for a gzip file, the
// uncompressed size its trailer records, mod 2^32); a mismatch is DATA_LOSS
// naming the URI. A stream that ends early or runs on past the last row is
// DATA_LOSS at the byte offset. Only unsigned-byte (0x08) files are
// supported (UNIMPLEMENTED otherwise).
//
// Thread safety: readers are used by one thread at a time (Cancel() is
// thread-safe); sources are Stages (stage.h).
#ifndef DATAECHO_FORMATS_IDX_H_
#define DATAECHO_FORMATS_IDX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

struct IdxHeader {
  uint8_t type = 0;            // 0x08 unsigned byte, 0x09 signed byte, 0x0B..0x0E wider types
  std::vector<uint32_t> dims;  // dims[0] = number of rows
  uint64_t header_bytes = 0;   // 4 + 4 * dims.size()
  uint64_t row_bytes = 0;      // product of dims[1:] times the element size
  uint64_t data_bytes = 0;     // dims[0] * row_bytes

  uint64_t rows() const { return dims.empty() ? 0 : dims[0]; }
};

// Parses the header at the start of `bytes` (which holds at least the header,
// else DATA_LOSS "truncated"). `uri` names the file in errors.
DATAECHO_EXPORT absl::StatusOr<IdxHeader> ParseIdxHeader(std::string_view bytes,
                                                         std::string_view uri);

struct IdxOptions {
  Compression compression = Compression::kAuto;  // kAuto: gzip for ".gz"
  size_t buffer_size = size_t{256} << 10;        // read (and inflate) buffer per file, at most
  size_t read_ahead = size_t{8} << 20;           // passed to ObjectStore::Open
};

// Reads the header of the IDX file at `uri` (the first bytes of its
// uncompressed stream), checked as a reader checks it: how many rows, of
// what shape, without reading them.
DATAECHO_EXPORT absl::StatusOr<IdxHeader> ReadIdxHeader(std::shared_ptr<ObjectStore> store,
                                                        const std::string& uri,
                                                        const IdxOptions& options = {});

// Reads the rows of one IDX file as Records (the row's bytes; offset = its
// byte offset in the uncompressed file; source_index from `file_index` and
// the row, see record.h).
DATAECHO_EXPORT absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenIdxFile(
    std::shared_ptr<ObjectStore> store, const std::string& uri, uint64_t file_index,
    const IdxOptions& options = {});

// The rows of several IDX files as a Stage<Record> ("idx_source").
DATAECHO_EXPORT StagePtr<Record> MakeIdxRecordSource(std::shared_ptr<ObjectStore> store,
                                                     std::vector<std::string> uris,
                                                     const IdxOptions& options = {},
                                                     const InterleaveOptions& interleave = {});

// Images zipped with labels as a Stage<Example> ("idx_source"): component 0
// is uint8 dims[1:] (with a trailing channel dimension of 1 when the rows are
// 2-D), the label is the label file's row, source_index is the row number.
// The two files must have the same number of rows (INVALID_ARGUMENT) and the
// labels file must be 1-D. Images share the bytes the reader allocated per
// row (no copy). It can start over (a Repeat stage, repeat.h, reopens both
// files for the next epoch and stamps the epoch on the Examples), and it saves
// and restores its state by reference (checkpoint.h): its position (epoch,
// rows taken, the last row's CRC-32C) and both files' fingerprints; a buffered
// Example is named by (row, epoch, CRC-32C of image and label) and read again
// at restore in one pass over the files. A file changed since the state was
// saved is DATA_LOSS naming it. Stats: extra "busy_s" = time reading, on the
// consumer's thread.
DATAECHO_EXPORT StagePtr<Example> MakeIdxSource(std::shared_ptr<ObjectStore> store,
                                                std::string images_uri, std::string labels_uri,
                                                const IdxOptions& options = {});

}  // namespace dataecho

#endif  // DATAECHO_FORMATS_IDX_H_
