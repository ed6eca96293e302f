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
#include "fmt/ranges.h"

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
  double v = static_cast<double>(bytes) / 1024;  // >= 1
  int unit = 0;
  while (v >= 1024 && unit + 1 < 6) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

namespace {

// "1.5 GiB", or "2^63 bytes" for a saturated size.
std::string NeedString(int64_t need) {
  return need == std::numeric_limits<int64_t>::max() ? "2^63 bytes" : FormatBytes(need);
}

// "<prefix>, above the memory cap of <cap> (<where the cap comes from>)".
absl::Status AboveCap(const std::string& prefix, int64_t max_bytes, std::string_view cap_option) {
  std::string cap_source =
      fmt::format("half of the {} this process may use", FormatBytes(AvailableMemoryBytes()));
  if (max_bytes > 0) {
    cap_source = fmt::format("{} = {}", cap_option.empty() ? "max_bytes" : cap_option, max_bytes);
  } else if (!cap_option.empty()) {
    cap_source = fmt::format("{} = 0: {}", cap_option, cap_source);
  }
  return absl::ResourceExhaustedError(fmt::format("{}, above the memory cap of {} ({})", prefix,
                                                  FormatBytes(EffectiveMemoryCap(max_bytes)),
                                                  cap_source));
}

}  // namespace

int64_t SaturatingProduct(absl::Span<const int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (f <= 0) return 0;
    if (__builtin_mul_overflow(p, f, &p)) p = std::numeric_limits<int64_t>::max();
  }
  return p;
}

int64_t SaturatingSum(absl::Span<const int64_t> terms) {
  int64_t s = 0;
  for (int64_t t : terms) {
    if (t > 0 && __builtin_add_overflow(s, t, &s)) s = std::numeric_limits<int64_t>::max();
  }
  return s;
}

absl::Status CheckMemoryEstimate(std::string_view stage, std::string_view what, int64_t count,
                                 int64_t bytes_each, int64_t max_bytes,
                                 std::string_view cap_option) {
  const int64_t need = SaturatingProduct({count, bytes_each});
  if (need <= EffectiveMemoryCap(max_bytes)) return absl::OkStatus();
  return AboveCap(fmt::format("{}: {} = {} needs at least {} ({} bytes each)", stage, what, count,
                              NeedString(need), bytes_each),
                  max_bytes, cap_option);
}

absl::StatusOr<int64_t> CheckShapeBytes(std::string_view stage, std::string_view what,
                                        absl::Span<const int64_t> dims, int64_t bytes_each,
                                        int64_t max_bytes, std::string_view cap_option) {
  auto shape = [&dims] { return fmt::format("[{}]", fmt::join(dims, ", ")); };
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} = {} has a negative dimension", stage, what, shape()));
  }
  const int64_t need = SaturatingProduct({SaturatingProduct(dims), bytes_each});
  if (need <= EffectiveMemoryCap(max_bytes)) return need;
  return AboveCap(fmt::format("{}: {} = {} needs at least {} ({} bytes each)", stage, what, shape(),
                              NeedString(need), bytes_each),
                  max_bytes, cap_option);
}

absl::StatusOr<int64_t> CheckBytes(std::string_view stage, std::string_view what, int64_t bytes,
                                   int64_t max_bytes, std::string_view cap_option) {
  if (bytes <= EffectiveMemoryCap(max_bytes)) return bytes;
  return AboveCap(fmt::format("{}: {} needs {}", stage, what, NeedString(bytes)), max_bytes,
                  cap_option);
}

}  // namespace dataecho
