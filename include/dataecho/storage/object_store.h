// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/object_store.h: where bytes come from (local files, HTTP(S), gs://, s3://).
//
// An `ObjectStore` is the one small interface every source reads through,
// like LevelDB's Env: stat an object, read a byte range, stream it with
// read-ahead, list by prefix. `OpenObjectStore()` returns the store that
// understands every URI scheme; wrappers (throttled, fault-injecting) take a
// store and return one.
//
//   auto store = dataecho::OpenObjectStore();            // all schemes
//   auto info = store->Stat("s3://bucket/train-00000.tfrecord");
//   auto reader = store->Open("https://host/data/part-0", {});
//   std::vector<uint8_t> buf(1 << 20);
//   absl::StatusOr<size_t> n = (*reader)->Read(absl::MakeSpan(buf));
//
// Errors (absl::Status, never exceptions) name the URI and the byte offset:
// NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT, DATA_LOSS, UNAVAILABLE
// (retries exhausted), FAILED_PRECONDITION (object changed mid-read),
// CANCELLED. See docs/storage.md.
//
// Returned and listed URIs keep the form they were asked for: "data/x" stays
// relative, "file:///data/x" keeps its scheme.
//
// Thread safety: an ObjectStore is thread-safe. An ObjectReader is used by one
// thread at a time, except Cancel(), which any thread may call.
#ifndef DATAECHO_STORAGE_OBJECT_STORE_H_
#define DATAECHO_STORAGE_OBJECT_STORE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dataecho/buffer.h"
#include "dataecho/export.h"
#include "dataecho/storage/store_options.h"

namespace dataecho {

struct ObjectInfo {
  std::string uri;
  uint64_t size = 0;
  // Opaque version: the ETag for remote objects, mtime+inode+size for files.
  std::string version;
};

struct ReadOptions {
  // First byte to read.
  uint64_t offset = 0;
  // Bytes to read from `offset` (clipped at the end of the object).
  uint64_t length = std::numeric_limits<uint64_t>::max();
  // Bytes fetched ahead of the consumer. Remote stores: for a slow store, at
  // least max_concurrency x chunk_size, or the ranges in flight are fewer
  // (docs/storage.md).
  size_t read_ahead = size_t{8} << 20;
};

// A sequential stream over one object.
class DATAECHO_EXPORT ObjectReader {
 public:
  virtual ~ObjectReader() = default;

  // Fills `dst` and returns dst.size(), or fewer bytes only at the end of the
  // range (0 = end). Every byte of the object is returned exactly once, in
  // order, across retries.
  virtual absl::StatusOr<size_t> Read(absl::Span<uint8_t> dst) = 0;

  // Absolute object offset of the next byte Read() returns.
  virtual uint64_t offset() const = 0;

  // The object as stat'ed when opened (its version is pinned for the read).
  virtual const ObjectInfo& info() const = 0;

  // Thread-safe: a blocked or later Read() returns CANCELLED promptly.
  virtual void Cancel() = 0;
};

class DATAECHO_EXPORT ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  virtual absl::StatusOr<ObjectInfo> Stat(std::string_view uri) = 0;

  // Bytes [offset, offset + length) clipped to the object's end.
  virtual absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset,
                                           uint64_t length) = 0;

  virtual absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                             const ReadOptions& options) = 0;

  // Objects whose URI starts with `prefix`, sorted by URI. For local paths
  // the listing is recursive, like an object store's (no directories).
  virtual absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) = 0;
};

// The store for every scheme: plain paths and file://, http://, https://,
// gs://bucket/key, s3://bucket/key. Remote stores start (their network
// thread, environment look-ups) on first use. An unknown scheme gives
// INVALID_ARGUMENT at the call that names it. Readers may outlive the store.
DATAECHO_EXPORT std::unique_ptr<ObjectStore> OpenObjectStore(
    const ObjectStoreOptions& options = {});

// `uri` as it may be shown in a message, a log line, stats, JSON or a plot:
// without user:password@, with the values of query parameters that carry
// credentials (X-Amz-Signature, X-Goog-Signature, token, sig, ...) replaced by
// "[redacted]", and control characters escaped ("\\x1b"). Every URI the
// library puts into a status goes through it; programs should too.
//
//   RedactUri("https://alice:pw@host/x?X-Amz-Signature=abc")
//       == "https://host/x?X-Amz-Signature=[redacted]"
DATAECHO_EXPORT std::string RedactUri(std::string_view uri);

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_OBJECT_STORE_H_
