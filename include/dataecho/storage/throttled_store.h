// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/throttled_store.h: a store wrapper that makes a fast store slow on purpose.
//
// Adds a fixed latency to every request and caps the bandwidth shared by all
// requests, to emulate a remote object store over local files and put a
// pipeline into the upstream-bound regime that data echoing is for.
//
//   dataecho::ThrottledStoreOptions throttle;
//   throttle.latency = absl::Milliseconds(20);
//   throttle.bytes_per_second = 100e6;
//   auto slow = dataecho::NewThrottledStore(dataecho::OpenObjectStore(), throttle);
//
// Requests: Stat, ReadRange, List and opening a reader each cost one
// latency; a reader costs one more latency every `request_bytes` bytes (when
// set), like a client that fetches an object in ranged GETs. Bytes are paced
// through one link: a transfer waits for its share of the cap after the
// requests before it. A reader keeps the ObjectReader contract: a Read fills
// its buffer across as many requests as it spans (short only at the end). A
// reader's waits end promptly on Cancel() (CANCELLED).
//
// Thread safety: thread-safe, like the wrapped store.
#ifndef DATAECHO_STORAGE_THROTTLED_STORE_H_
#define DATAECHO_STORAGE_THROTTLED_STORE_H_

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "dataecho/export.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

struct ThrottledStoreOptions {
  // Added to every request before its first byte.
  absl::Duration latency = absl::ZeroDuration();
  // Cap on the bytes per second of all transfers together; 0 = no cap.
  double bytes_per_second = 0;
  // A reader pays `latency` again after every this many bytes; 0 = only
  // when it is opened.
  uint64_t request_bytes = 0;
};

DATAECHO_EXPORT std::unique_ptr<ObjectStore> NewThrottledStore(
    std::shared_ptr<ObjectStore> base, const ThrottledStoreOptions& options);

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_THROTTLED_STORE_H_
