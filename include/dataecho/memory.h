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
// Thread safety: every function is thread-safe.
#ifndef DATAECHO_MEMORY_H_
#define DATAECHO_MEMORY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
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

// `bytes` for a message: "123 bytes", "4.5 MiB", "12.0 GiB", ...
DATAECHO_EXPORT std::string FormatBytes(int64_t bytes);

}  // namespace dataecho

#endif  // DATAECHO_MEMORY_H_
