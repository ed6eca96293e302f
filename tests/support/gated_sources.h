// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Sources whose readiness the test controls, for testing adaptive echo by
// counts instead of wall time:
//
// - GatedSource<T>: elements become ready only when the test pushes them;
//   Next() blocks until one is ready (or the source is cancelled), TryNext()
//   reports whether one is. `waiting()` tells the test that a consumer is
//   blocked inside Next().
// - SimulatedSource: on a simulated clock (ticks): item n is ready at tick
//   r * (n + 1). TryNext() is ready once the clock has reached that tick;
//   Next() "waits" by advancing the clock to it.
#ifndef DATAECHO_TESTS_SUPPORT_GATED_SOURCES_H_
#define DATAECHO_TESTS_SUPPORT_GATED_SOURCES_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dataecho/example.h"
#include "dataecho/stage.h"
#include "support/examples.h"

namespace dataecho::testing {

template <typename T>
class GatedSource final : public Stage<T> {
 public:
  using Result = absl::StatusOr<std::optional<T>>;

  // Makes `item` ready (then end of stream or an error, if pushed).
  void Push(Result item) {
    absl::MutexLock lock(&mu_);
    ready_.push_back(std::move(item));
  }
  void PushEnd() { Push(std::optional<T>()); }

  // Consumers blocked in Next() right now.
  int waiting() const {
    absl::MutexLock lock(&mu_);
    return waiting_;
  }
  // Blocks until `n` consumers are blocked in Next().
  void AwaitWaiting(int n) const {
    struct Arg {
      const int* waiting;
      int n;
    } arg{nullptr, n};
    absl::MutexLock lock(&mu_);
    arg.waiting = &waiting_;
    mu_.Await(absl::Condition(
        +[](Arg* a) { return *a->waiting == a->n; }, &arg));
  }
  int64_t taken() const {
    absl::MutexLock lock(&mu_);
    return taken_;
  }

  Result Next() override {
    absl::MutexLock lock(&mu_);
    ++waiting_;
    mu_.Await(absl::Condition(this, &GatedSource::ReadyOrCancelled));
    --waiting_;
    return PopLocked();
  }
  bool TryNext(Result* out) override {
    absl::MutexLock lock(&mu_);
    if (!ReadyOrCancelled()) return false;
    *out = PopLocked();
    return true;
  }
  void Cancel() override {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
  }
  void AppendStats(std::vector<StageStats>* out) const override {
    out->push_back(StageStats{.name = "gated"});
  }

 private:
  bool ReadyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !ready_.empty();
  }
  Result PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    Result r = ready_.front();
    // End of stream and errors stay; elements are taken.
    if (r.ok() && r->has_value()) {
      ready_.pop_front();
      ++taken_;
    }
    return r;
  }

  mutable absl::Mutex mu_;
  std::deque<Result> ready_ ABSL_GUARDED_BY(mu_);
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t taken_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
};

class SimulatedSource final : public Stage<Example> {
 public:
  // `tick` is the simulation's clock, owned by the test; item n is ready at
  // tick r * (n + 1).
  SimulatedSource(int64_t& tick, int64_t r) : tick_(tick), r_(r) {}

  absl::StatusOr<std::optional<Example>> Next() override {
    const int64_t ready = r_ * (n_ + 1);
    if (tick_ < ready) tick_ = ready;
    return MakeExample(static_cast<uint64_t>(n_++));
  }
  bool TryNext(absl::StatusOr<std::optional<Example>>* out) override {
    if (tick_ < r_ * (n_ + 1)) return false;
    *out = MakeExample(static_cast<uint64_t>(n_++));
    return true;
  }
  void Cancel() override {}
  void AppendStats(std::vector<StageStats>* out) const override {
    out->push_back(StageStats{.name = "sim"});
  }
  int64_t produced() const { return n_; }

 private:
  int64_t& tick_;
  const int64_t r_;
  int64_t n_ = 0;
};

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_GATED_SOURCES_H_
