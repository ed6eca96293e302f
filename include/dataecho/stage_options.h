// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// stage_options.h: the options of Prefetch (prefetch.h), Shuffle
// (shuffle.h), Throttle (throttle.h), Filter (filter.h), Cache (cache.h), Zip
// (zip.h) and Interleave (interleave.h); Map's are in map_options.h, the echo
// stages' in echo_options.h, the batching stages' in batch_options.h. Apart
// from the stages so that the builder (builder.h) can take them without the
// stages' definitions.
//
//   dataecho::ShuffleOptions shuffle = {.buffer_size = 10000, .seed = 2};
//   auto p = std::move(examples).Prefetch({.depth = 64}).Shuffle(shuffle);
#ifndef DATAECHO_STAGE_OPTIONS_H_
#define DATAECHO_STAGE_OPTIONS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "dataecho/internal/option_checks.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/status_macros.h"

namespace dataecho {

struct PrefetchOptions {
  // Elements buffered ahead of the consumer. >= 1.
  int depth = 16;
  // Name shown in stats.
  std::string name = "prefetch";
  // If set, the number of queued elements is stored here after every push and
  // pop, for other stages to read: e.g. AdaptiveEchoOptions::repeat_gate, to
  // repeat only while the trainer's queue runs low.
  std::shared_ptr<std::atomic<int64_t>> level = nullptr;

  absl::Status Validate() const {
    if (depth < 1) {
      return absl::InvalidArgumentError(
          internal::StrCat("prefetch depth must be >= 1, got ", depth));
    }
    return absl::OkStatus();
  }
};

struct ShuffleOptions {
  // Elements held. >= 1 (1 = no shuffling).
  int64_t buffer_size = 10000;
  uint64_t seed = 0;
  // Cap on the bytes held: payloads (ElementTraits<T>::ByteSize) plus
  // sizeof(T) per buffered element. 0 = DefaultMemoryCap() (memory.h).
  int64_t max_bytes = 0;
  std::string name = "shuffle";

  absl::Status Validate() const {
    DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("shuffle buffer_size", buffer_size, 1));
    return internal::CheckAtLeast("shuffle max_bytes", max_bytes, 0);
  }
};

struct ThrottleOptions {
  // Added delay per element.
  absl::Duration latency = absl::ZeroDuration();
  // Bandwidth cap; 0 = none.
  double bytes_per_second = 0;
  // The last part of every wait is a busy-wait of at most this long; a plain
  // sleep overshoots by tens of microseconds. 0 = sleep only (the schedule
  // still makes up for oversleeping; see the file comment).
  absl::Duration spin = absl::Microseconds(200);
  // A request this soon after the previous scheduled release continues the
  // schedule (see the file comment); at least one element's cost.
  absl::Duration catch_up = absl::Milliseconds(1);
  // Release without sleeping while the schedule is less than this far ahead
  // (see the file comment); 0 = sleep for every element.
  absl::Duration min_sleep = absl::ZeroDuration();
  std::string name = "throttle";

  absl::Status Validate() const {
    if (latency < absl::ZeroDuration() || bytes_per_second < 0 || spin < absl::ZeroDuration() ||
        catch_up < absl::ZeroDuration() || min_sleep < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          "throttle latency, bytes_per_second, spin, catch_up and min_sleep must be >= 0");
    }
    return absl::OkStatus();
  }
};

struct FilterOptions {
  // Name shown in stats.
  std::string name = "filter";
};

// What Filter asks of each element: keep it (true), drop it, or an error.
template <typename T>
using FilterPredicate = std::function<absl::StatusOr<bool>(const T&)>;

struct CacheOptions {
  // Cap on the payload bytes kept (ElementTraits<T>::ByteSize); 0 = no cap.
  int64_t max_bytes = int64_t{1} << 30;
  // Name shown in stats.
  std::string name = "cache";

  absl::Status Validate() const {
    return internal::CheckAtLeast(internal::StrCat(name, ": max_bytes"), max_bytes, 0);
  }
};

struct ZipOptions {
  // Name shown in stats.
  std::string name = "zip";
};

struct InterleaveStageOptions {
  // Pipelines open at a time. >= 1.
  int64_t cycle_length = 2;
  // Consecutive elements taken from one pipeline before moving to the next. >= 1.
  int64_t block_length = 1;
  // Name shown in stats.
  std::string name = "interleave";

  absl::Status Validate() const {
    if (cycle_length < 1 || block_length < 1) {
      return absl::InvalidArgumentError(
          internal::StrCat(name, ": cycle_length and block_length must be >= 1, got ", cycle_length,
                           " and ", block_length));
    }
    return absl::OkStatus();
  }
};

}  // namespace dataecho

#endif  // DATAECHO_STAGE_OPTIONS_H_
