// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// memory.h: the memory cap of the stages that buffer elements, and the
// check that refuses an absurd size before anything is allocated.
//
// Shuffle and Batch take a `max_bytes` option; 0 (their default) means
// DefaultMemoryCap(): half of the memory this process may use (physical
// memory, lowered by a cgroup limit or an address-space rlimit). Their
// factories compare what their options must allocate at least against the
// cap and return RESOURCE_EXHAUSTED naming the option, so that
// `buffer_size = 99999999999999` fails at once instead of growing until
// the machine runs out of memory.
//
//   int64_t cap = dataecho::DefaultMemoryCap();  // e.g. 12 GiB on a 24 GiB machine
//   absl::Status s = dataecho::CheckMemoryEstimate(
//       "shuffle", "buffer_size", /*count=*/n, /*bytes_each=*/sizeof(Example),
//       /*max_bytes=*/0, "ShuffleOptions::max_bytes");
//   // RESOURCE_EXHAUSTED "shuffle: buffer_size = n needs at least ... bytes,
//   // above the memory cap of ... (ShuffleOptions::max_bytes = 0: half of ...)"
//
// Every size that comes from an option, from the data, from the environment
// or from a saved state goes through these functions before anything is
// allocated for it: products and sums of sizes saturate at INT64_MAX (never
// wrap around to a small number), and the result is compared with the cap.
// A shape (several dimensions) is checked by CheckShapeBytes:
//
//   absl::StatusOr<int64_t> bytes = dataecho::CheckShapeBytes(
//       "padded_batch", "padded_shapes[0]", {rows, 512, 1 << 40}, /*bytes_each=*/4,
//       options.max_bytes, "PaddedBatchOptions::max_bytes");
//   // RESOURCE_EXHAUSTED "padded_batch: padded_shapes[0] = [32, 512, 1099511627776]
//   // needs at least 2^63 bytes (4 bytes each), above the memory cap of ..."
//
// Thread safety: every function is thread-safe.
#ifndef DATAECHO_MEMORY_H_
#define DATAECHO_MEMORY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dataecho/export.h"

namespace dataecho {

// The bytes of memory this process may use: physical memory, or less when a
// cgroup (v1 or v2) memory limit or the RLIMIT_AS / RLIMIT_DATA soft limit
// says so. Read once, at the first call.
DATAECHO_EXPORT int64_t AvailableMemoryBytes();

// The cap a stage's `max_bytes = 0` stands for: AvailableMemoryBytes() / 2.
DATAECHO_EXPORT int64_t DefaultMemoryCap();

// `max_bytes` if > 0, else DefaultMemoryCap().
DATAECHO_EXPORT int64_t EffectiveMemoryCap(int64_t max_bytes);

// OK if `count` items of `bytes_each` bytes fit in EffectiveMemoryCap(max_bytes)
// (the product saturates instead of overflowing); else RESOURCE_EXHAUSTED
// "<stage>: <what> = <count> needs at least <bytes> (<bytes_each> bytes
// each), above the memory cap of <cap> (<cap_option> = <max_bytes>...)".
// An empty `cap_option` (a program without such an option) leaves it out.
DATAECHO_EXPORT absl::Status CheckMemoryEstimate(std::string_view stage, std::string_view what,
                                                 int64_t count, int64_t bytes_each,
                                                 int64_t max_bytes, std::string_view cap_option);

// The product / sum of non-negative sizes, INT64_MAX once it overflows
// (never a wrapped-around value). A negative factor or term counts as 0.
DATAECHO_EXPORT int64_t SaturatingProduct(absl::Span<const int64_t> factors);
DATAECHO_EXPORT int64_t SaturatingSum(absl::Span<const int64_t> terms);

// The bytes of an array of shape `dims` with `bytes_each` bytes a cell (the
// product, overflow-checked), if they fit in EffectiveMemoryCap(max_bytes);
// else RESOURCE_EXHAUSTED "<stage>: <what> = [d0, d1, ...] needs at least
// <bytes> (<bytes_each> bytes each), above the memory cap of <cap> (...)", as
// CheckMemoryEstimate. A negative dimension is INVALID_ARGUMENT naming `what`.
DATAECHO_EXPORT absl::StatusOr<int64_t> CheckShapeBytes(std::string_view stage,
                                                        std::string_view what,
                                                        absl::Span<const int64_t> dims,
                                                        int64_t bytes_each, int64_t max_bytes,
                                                        std::string_view cap_option);

// `bytes` (already computed with the saturating functions above, e.g. the
// sum of several buffers) if it fits in EffectiveMemoryCap(max_bytes); else
// RESOURCE_EXHAUSTED "<stage>: <what> needs <bytes>, above the memory cap of
// <cap> (...)". `what` says where the size comes from ("3 rows padded to
// [4096, 4096]", "WORLD_SIZE = 2147483647").
DATAECHO_EXPORT absl::StatusOr<int64_t> CheckBytes(std::string_view stage, std::string_view what,
                                                   int64_t bytes, int64_t max_bytes,
                                                   std::string_view cap_option);

// `bytes` for a message: "123 bytes", "4.5 MiB", "12.0 GiB", ...
DATAECHO_EXPORT std::string FormatBytes(int64_t bytes);

}  // namespace dataecho

#endif  // DATAECHO_MEMORY_H_
