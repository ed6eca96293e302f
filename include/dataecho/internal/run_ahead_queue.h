// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/run_ahead_queue.h: a bounded queue, in order, between one
// producer thread and a consumer, over the run-ahead core
// (internal/run_ahead.h, which holds its lock and its policy). Prefetch and
// the Python hand-off stand on it. Every element is queued with its status:
// the end or an error comes after every element made before it, and stays.
//
//   internal::RunAheadQueue<Example> q(/*depth=*/16);
//   // producer thread: runs until the end, a stop or a cancel
//   q.Produce([&](size_t want, std::vector<Example>& values,
//                 std::optional<Item>& terminal) { ...; return make_ns; });
//   // consumer
//   absl::StatusOr<std::optional<Example>> e = q.Next();
//
// The consumer takes up to a quarter of the queue per lock and returns them
// one by one without it; they count against depth until its next lock.
//
// Thread safety: Produce() on the producer thread; Next(), TryTake(),
// Preload() and Ahead() on the consumer's; Clear() under core().mu() with no
// producer running.
#ifndef DATAECHO_INTERNAL_RUN_AHEAD_QUEUE_H_
#define DATAECHO_INTERNAL_RUN_AHEAD_QUEUE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/internal/ring_queue.h"
#include "dataecho/internal/run_ahead.h"
#include "dataecho/internal/taken_run.h"
#include "dataecho/stage.h"
#include "dataecho/trace.h"

namespace dataecho::internal {

template <typename T>
class RunAheadQueue {
 public:
  using Item = absl::StatusOr<std::optional<T>>;

  // `level`: if set, the elements that count against depth are stored
  // there after every push and take (PrefetchOptions::level). `trace_name`:
  // a timeline counter of them (nullptr: none).
  explicit RunAheadQueue(int64_t depth, std::shared_ptr<std::atomic<int64_t>> level = nullptr,
                         const char* trace_name = nullptr)
      : core_(depth), level_(std::move(level)), trace_name_(trace_name) {}

  RunAhead& core() { return core_; }

  // ---- the producer ----
  // Until the end, a stop or a cancel: `make(want, values, terminal)` makes up
  // to `want` elements into `values`, or fewer and the end or an error into
  // `terminal`, and returns the nanoseconds it took.
  template <typename Make>
  void Produce(Make make) {
    std::vector<T> values;
    std::optional<Item> terminal;
    internal::MutexLock lock(&core_.mu());
    int64_t want = 1;
    while (true) {
      const int64_t need = core_.Outstanding() >= core_.depth() ? core_.RefillNeed() : 1;
      const int64_t n = core_.Reserve(want, need);
      if (n == 0) return;  // a stop or a cancel
      values.clear();
      core_.mu().Unlock();
      const int64_t ns = make(static_cast<size_t>(n), values, terminal);
      core_.mu().Lock();
      const auto made = static_cast<int64_t>(values.size());
      core_.Made(n, made);
      if (core_.StoppedLocked()) return;  // a Restart() drops the rest of the epoch
      for (T& v : values) queue_.push_back(std::move(v));
      core_.Pushed(static_cast<int64_t>(queue_.size()), made, ns);
      PublishLevelLocked();
      if (terminal.has_value()) {
        terminal_ = std::move(terminal);
        core_.Ended();
        return;
      }
      want = core_.RunLength();
    }
  }

  // ---- the consumer ----
  Item Next() {
    if (!taken_.empty()) return PopTaken();  // built in place: no assignment
    Item item;
    TryTake(RunAhead::kNoDeadline, &item);
    return item;
  }
  // Takes the next item into *out if one is ready by `deadline` (NowNanos();
  // 0: only if ready now, without reading the clock); after the end or an
  // error, returns it again; after a cancel, CANCELLED.
  bool TryTake(int64_t deadline, Item* out) {
    if (!taken_.empty()) {
      internal::AssignInPlace(out, [&] { return PopTaken(); });
      return true;
    }
    internal::MutexLock lock(&core_.mu());
    taken_.ReleaseLocked(core_);
    if (!core_.ReadyLocked() && (deadline == 0 || !core_.AwaitReady(deadline))) return false;
    internal::AssignInPlace(out, [&] { return TakeLocked(); });
    return true;
  }
  // Elements handed out before any the producer makes (a restore's read-ahead).
  // REQUIRES: before the producer starts.
  void Preload(std::vector<T> items) {
    for (T& v : items) taken_.Preload(std::move(v));
  }
  // What was made and not returned yet, oldest first.
  // REQUIRES: core().mu() held, producers paused (RunAhead::Pause()).
  std::vector<T> Ahead() const {
    std::vector<T> ahead;
    for (size_t i = 0; i < taken_.size(); ++i) ahead.push_back(taken_[i]);
    for (size_t i = 0; i < queue_.size(); ++i) ahead.push_back(queue_[i]);
    return ahead;
  }
  // The end or the error, once the producer met it and everything before it was taken.
  const std::optional<Item>& terminal() const { return terminal_; }
  bool TerminalErrorLocked() const {
    return terminal_.has_value() && !terminal_->ok() && queue_.empty() && taken_.empty();
  }
  // Elements queued or taken and not yet returned.
  int64_t QueuedLocked() const { return static_cast<int64_t>(queue_.size()) + taken_.held(); }
  // Drops everything (the rest of an epoch).
  void Clear() {
    queue_.clear();
    taken_.Clear();
    terminal_.reset();
    PublishLevelLocked();
  }

 private:
  // Takes up to TakeRun() ready elements into taken_ and returns the first.
  Item TakeLocked() {
    if (core_.CancelledLocked()) return CancelledError();
    if (queue_.empty()) return *terminal_;  // the end or the error: sticky
    taken_.TakeLocked(
        core_, [&] { return queue_.empty() ? nullptr : &queue_.front(); },
        [&] { queue_.pop_front(); });
    PublishLevelLocked();
    return PopTaken();
  }
  Item PopTaken() {
    if (core_.cancelled()) return CancelledError();
    return Item(std::optional<T>(taken_.Pop()));
  }
  void PublishLevelLocked() {
    const int64_t level = QueuedLocked();
    if (level_) level_->store(level, std::memory_order_relaxed);
    if (trace_name_ != nullptr && TraceEnabled()) [[unlikely]] {
      TraceCounter(trace_name_, static_cast<double>(level));
    }
  }

  RunAhead core_;
  const std::shared_ptr<std::atomic<int64_t>> level_;
  const char* const trace_name_;
  RingQueue<T> queue_;            // under core_.mu()
  std::optional<Item> terminal_;  // under core_.mu()
  TakenRun<T> taken_;             // the consumer's
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_RUN_AHEAD_QUEUE_H_
