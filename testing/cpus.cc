// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "testing/cpus.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include "fmt/format.h"

namespace dataecho::testing {

absl::Status RunOnCpus(int n) {
  if (n < 0) return absl::InvalidArgumentError(fmt::format("{} CPUs: must be >= 0", n));
  if (n == 0) return absl::OkStatus();
  cpu_set_t all;
  if (sched_getaffinity(0, sizeof(all), &all) != 0) {
    return absl::InternalError(fmt::format("sched_getaffinity: {}", std::strerror(errno)));
  }
  if (n > CPU_COUNT(&all)) {
    return absl::InvalidArgumentError(
        fmt::format("{} CPUs: this process may run on {}", n, CPU_COUNT(&all)));
  }
  cpu_set_t some;
  CPU_ZERO(&some);
  for (int cpu = 0, kept = 0; cpu < CPU_SETSIZE && kept < n; ++cpu) {
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &some);
      ++kept;
    }
  }
  if (sched_setaffinity(0, sizeof(some), &some) != 0) {
    return absl::InternalError(fmt::format("sched_setaffinity: {}", std::strerror(errno)));
  }
  return absl::OkStatus();
}

int UsableCpus() {
  cpu_set_t all;
  if (sched_getaffinity(0, sizeof(all), &all) != 0) return 1;
  return CPU_COUNT(&all);
}

}  // namespace dataecho::testing
