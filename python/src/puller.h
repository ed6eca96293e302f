// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/puller.h: the thread that pulls a pipeline's last stage for Python.
//
// Python's next() must be interruptible (Ctrl-C raises KeyboardInterrupt in the
// waiting thread) and must not hold the GIL while it waits. A stage's Next()
// cannot be waited on with a timeout, so a Puller runs it on a thread of its
// own and keeps at most one element ready; Python waits for that element in
// short slices with the GIL released, checking for signals between them:
//
//   Puller<Batch> puller(std::move(stage));
//   while (true) {
//     std::optional<Puller<Batch>::Item> item = puller.Pop(absl::Milliseconds(50));
//     if (!item.has_value()) { /* not yet: check signals, wait again */ continue; }
//     ...   // an element, the end (sticky) or an error (sticky)
//   }
//
// So the pipeline runs at most one element ahead of Python. Its stats row
// ("python") counts the elements Python took and the time it waited for them
// (consumer_wait); input_wait is the puller's time inside the last stage.
//
// Thread safety: Pop() from one thread at a time; Cancel(), AppendStats() and
// Shutdown() from any thread. Shutdown() joins the thread and destroys the
// stages: call it without the GIL (a map function may be waiting for it).
#ifndef DATAECHO_PYTHON_SRC_PULLER_H_
#define DATAECHO_PYTHON_SRC_PULLER_H_

#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"

namespace dataecho::python {

template <typename T>
class Puller {
 public:
  using Item = absl::StatusOr<std::optional<T>>;

  explicit Puller(StagePtr<T> stage) : stage_(std::move(stage)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Puller() { Shutdown(); }
  Puller(const Puller&) = delete;
  Puller& operator=(const Puller&) = delete;

  // The next item if one arrives within `timeout`, else std::nullopt. After
  // the end or an error, returns it again (sticky); after Cancel(), CANCELLED.
  std::optional<Item> Pop(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    if (!ReadyOrCancelled()) {  // the clock is read only for a real wait
      const int64_t t0 = internal::NowNanos();
      mu_.AwaitWithTimeout(absl::Condition(this, &Puller::ReadyOrCancelled), timeout);
      totals_.consumer_wait_ns += internal::NowNanos() - t0;
    }
    if (cancel_) return Item(CancelledError());
    if (ready_.has_value()) {
      Item item = *std::move(ready_);
      ready_.reset();
      ++totals_.elements;
      totals_.bytes += static_cast<int64_t>(ElementTraits<T>::ByteSize(**item));
      return item;
    }
    if (terminal_.has_value()) return *terminal_;
    return std::nullopt;
  }

  void Cancel() {
    {
      absl::MutexLock lock(&mu_);
      cancel_ = true;
    }
    absl::MutexLock lock(&stage_mu_);
    if (stage_ != nullptr) stage_->Cancel();
  }

  // Cancels, joins the thread and destroys the stages. Idempotent.
  void Shutdown() {
    Cancel();
    if (thread_.joinable()) thread_.join();
    StagePtr<T> stages;
    {
      absl::MutexLock lock(&stage_mu_);
      stages = std::move(stage_);
    }
    stages.reset();  // joins the stages' threads, outside the lock
  }

  void AppendStats(std::vector<StageStats>* out) const {
    {
      absl::MutexLock lock(&stage_mu_);
      if (stage_ != nullptr) stage_->AppendStats(out);
    }
    absl::MutexLock lock(&mu_);
    out->push_back(totals_.Report("python", {}));
  }

 private:
  bool ReadyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || ready_.has_value() || terminal_.has_value();
  }
  bool EmptyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !ready_.has_value();
  }

  void Run() {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &Puller::EmptyOrCancelled));
        if (cancel_) return;
      }
      // stage_ is only reset after this thread is joined.
      const int64_t t0 = internal::NowNanos();
      Item item = stage_->Next();  // NOLINT(clang-analyzer-core.CallAndMessage)
      const int64_t waited = internal::NowNanos() - t0;
      absl::MutexLock lock(&mu_);
      totals_.input_wait_ns += waited;
      if (!item.ok() || !item->has_value()) {
        terminal_ = std::move(item);
        return;
      }
      ready_ = std::move(item);
    }
  }

  mutable absl::Mutex stage_mu_;  // guards resetting stage_ against stats and Cancel()
  // Used without stage_mu_ by the pulling thread, which Shutdown() joins first.
  StagePtr<T> stage_;
  mutable absl::Mutex mu_;
  std::optional<Item> ready_ ABSL_GUARDED_BY(mu_);     // the next element
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);  // the end or the error
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started after everything above exists
};

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PULLER_H_
