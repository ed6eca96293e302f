// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/map_parallelism.h"

#include <algorithm>
#include <utility>

namespace dataecho {

void MapParallelism::Raise(int workers) {
  const int want = std::clamp(workers, 0, kMaxWorkers);
  int now = requested_.load(std::memory_order_relaxed);
  while (want > now && !requested_.compare_exchange_weak(now, want, std::memory_order_relaxed)) {
  }
}

MapParallelism::Reading MapParallelism::Read() const {
  absl::MutexLock lock(&mu_);
  if (!reader_) return Reading{};
  Reading r = reader_();
  r.attached = true;
  return r;
}

void MapParallelism::Attach(std::function<Reading()> reader) {
  absl::MutexLock lock(&mu_);
  reader_ = std::move(reader);
}

}  // namespace dataecho
