// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fork_join.h (internal): a small fixed pool that runs the parts of one job
// on several threads and waits for all of them (the Batch stage splits the rows
// of a large batch this way).
//
//   internal::ForkJoin pool(2);        // the caller + 1 worker thread
//   pool.Run([&](int part, int parts) { ConvertRows(part * n / parts, (part + 1) * n / parts); });
//
// Thread safety: Run() is called by one thread at a time; the parts run
// concurrently and must not touch the same memory.
#ifndef DATAECHO_SRC_INTERNAL_FORK_JOIN_H_
#define DATAECHO_SRC_INTERNAL_FORK_JOIN_H_

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace dataecho::internal {

class ForkJoin {
 public:
  // `threads` >= 1 parts per job: the caller runs part 0, threads - 1 workers
  // (started here) the others.
  explicit ForkJoin(int threads);
  ~ForkJoin();  // stops and joins the workers
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;

  int threads() const { return threads_; }

  // Calls part(i, threads()) for every i in [0, threads()), part 0 on the
  // calling thread, and returns when all have returned.
  void Run(absl::FunctionRef<void(int part, int parts)> part);

 private:
  void Work(int part);

  const int threads_;
  absl::Mutex mu_;
  const absl::FunctionRef<void(int, int)>* job_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // jobs started
  int running_ ABSL_GUARDED_BY(mu_) = 0;         // worker parts of the current job not done
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;  // last: joined before the rest goes
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_FORK_JOIN_H_
