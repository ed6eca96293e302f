// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <string>

#include "fmt/format.h"

namespace dataecho {
namespace {

// The first number in `path` (a cgroup limit file), or 0 when it is missing,
// says "max" or is not a number.
int64_t ReadLimit(const char* path) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word)) return 0;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size() || v <= 0) return 0;
  return v;
}

int64_t ComputeAvailable() {
  int64_t bytes = std::numeric_limits<int64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && pages <= std::numeric_limits<int64_t>::max() / page)
    bytes = int64_t{pages} * page;
  for (const char* path : {"/sys/fs/cgroup/memory.max",                       // cgroup v2
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {  // v1
    const int64_t limit = ReadLimit(path);
    if (limit > 0) bytes = std::min(bytes, limit);
  }
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit rl{};
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < static_cast<rlim_t>(std::numeric_limits<int64_t>::max()))
      bytes = std::min(bytes, static_cast<int64_t>(rl.rlim_cur));
  }
  return bytes;
}

}  // namespace

int64_t AvailableMemoryBytes() {
  static const int64_t bytes = ComputeAvailable();
  return bytes;
}

int64_t DefaultMemoryCap() { return AvailableMemoryBytes() / 2; }

int64_t EffectiveMemoryCap(int64_t max_bytes) {
  return max_bytes > 0 ? max_bytes : DefaultMemoryCap();
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024 && unit + 1 < 6) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

absl::Status CheckMemoryEstimate(std::string_view stage, std::string_view what, int64_t count,
                                 int64_t bytes_each, int64_t max_bytes,
                                 std::string_view cap_option) {
  const int64_t cap = EffectiveMemoryCap(max_bytes);
  int64_t need = 0;
  if (count > 0 && bytes_each > 0 && __builtin_mul_overflow(count, bytes_each, &need))
    need = std::numeric_limits<int64_t>::max();
  if (need <= cap) return absl::OkStatus();
  std::string cap_source =
      fmt::format("half of the {} this process may use", FormatBytes(AvailableMemoryBytes()));
  if (max_bytes > 0) {
    cap_source = fmt::format("{} = {}", cap_option.empty() ? "max_bytes" : cap_option, max_bytes);
  } else if (!cap_option.empty()) {
    cap_source = fmt::format("{} = 0: {}", cap_option, cap_source);
  }
  return absl::ResourceExhaustedError(fmt::format(
      "{}: {} = {} needs at least {} ({} bytes each), above the memory cap of {} ({})", stage, what,
      count, need == std::numeric_limits<int64_t>::max() ? "2^63 bytes" : FormatBytes(need),
      bytes_each, FormatBytes(cap), cap_source));
}

}  // namespace dataecho
