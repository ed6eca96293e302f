// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// testing/cpus.h: runs a program on some of the CPUs it may use, to measure
// how a pipeline scales (one CPU against all of them: imagenet_bench --cpus,
// echo_bench --cpus).
//
//   if (absl::Status s = dataecho::testing::RunOnCpus(1); !s.ok()) return s;
//   ...  // the threads started from here on share that one CPU
//
// Thread safety: call it before starting threads; it sets the calling
// thread's CPU affinity, which threads started later inherit.
#ifndef DATAECHO_TESTING_CPUS_H_
#define DATAECHO_TESTING_CPUS_H_

#include "absl/status/status.h"

namespace dataecho::testing {

// Restricts the calling thread, and the threads it starts from now on, to the
// first `n` of the CPUs it may run on (sched_setaffinity); 0 leaves them all.
// INVALID_ARGUMENT for n < 0 or more CPUs than it may run on.
absl::Status RunOnCpus(int n);

// How many CPUs the calling thread may run on (its affinity).
int UsableCpus();

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTING_CPUS_H_
