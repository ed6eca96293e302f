// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The record source with cycle_length > 1: k reading threads
// (formats/record_source.h).
#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_source_interleaved.h"

namespace dataecho::internal {

StagePtr<Record> MakeInterleavedSource(std::vector<std::string> uris, RecordFileOpener open,
                                       InterleaveOptions options, std::string name,
                                       std::shared_ptr<const CorruptionBudget> budget,
                                       RecordRangeOpener open_range,
                                       std::optional<uint64_t> list_hash,
                                       std::shared_ptr<const RereadFiles> reread_files) {
  return std::make_unique<InterleavedSource>(
      std::move(uris), std::move(open), options, std::move(name), std::move(budget),
      std::move(open_range), list_hash, std::move(reread_files));
}

}  // namespace dataecho::internal
