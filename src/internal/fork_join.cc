// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "internal/fork_join.h"

#include "dataecho/stage_kit.h"
#include "dataecho/trace.h"

namespace dataecho::internal {

ForkJoin::ForkJoin(int threads) : threads_(threads < 1 ? 1 : threads) {
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { Work(i); });
}

ForkJoin::~ForkJoin() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void ForkJoin::Run(absl::FunctionRef<void(int part, int parts)> part) {
  if (threads_ == 1) {
    part(0, 1);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    job_ = &part;
    running_ = threads_ - 1;
    ++generation_;
  }
  part(0, threads_);
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &running_));
  job_ = nullptr;
}

void ForkJoin::Work(int part) {
  StartPipelineThread("row worker");
  int64_t seen = 0;
  while (true) {
    const absl::FunctionRef<void(int, int)>* job;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this, &seen]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || generation_ != seen; };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(part, threads_);
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace dataecho::internal
