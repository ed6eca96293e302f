// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The reference for benchmarks/compile_time.sh: a program of readme_pipeline.cc's
// size that includes the Abseil and standard headers dataecho's public headers
// include (every one of them), and not dataecho. What compiling
// readme_pipeline.cc costs above this is what dataecho's own headers cost.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

int main(int argc, char** argv) {
  std::vector<std::string> shards(argv + 1, argv + argc);
  auto rows_of = [](const std::string& shard) -> absl::StatusOr<int64_t> {
    if (shard.empty()) return absl::InvalidArgumentError("empty shard name");
    return static_cast<int64_t>(shard.size());
  };
  int64_t rows = 0;
  for (const std::string& shard : shards) {
    absl::StatusOr<int64_t> n = rows_of(shard);
    if (!n.ok()) {
      std::fprintf(stderr, "%s\n", n.status().ToString().c_str());
      return 1;
    }
    rows += *n;
  }
  std::printf("%s\n", absl::StrCat(rows, " rows").c_str());
  return 0;
}
