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
// CHECKPOINTS. SaveState() is the position behind the last element Python
// took: it pauses the pulling thread between two Next() calls, writes the
// chain's state and then a section of its own ("python") holding a reference
// to the element it pulled ahead (the last stage's SaveRefs()), if any.
// RestoreInto() reads such a state into a chain that was not read from and
// gives back that element, which a new Puller hands out first:
//
//   std::optional<Example> ahead;
//   absl::Status s = Puller<Example>::RestoreInto(*stage, state, &ahead);
//   Puller<Example> puller(std::move(stage), std::move(ahead));
//
// Thread safety: Pop() and SaveState() from one thread at a time; Cancel(),
// AppendStats() and Shutdown() from any thread. Shutdown() joins the thread
// and destroys the stages: call it without the GIL (a map function may be
// waiting for it).
#ifndef DATAECHO_PYTHON_SRC_PULLER_H_
#define DATAECHO_PYTHON_SRC_PULLER_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::python {

template <typename T>
class Puller {
 public:
  using Item = absl::StatusOr<std::optional<T>>;
  // The section the puller adds to the chain's state.
  static constexpr std::string_view kSection = "python";

  // `ahead`: an element to hand out before the stage's (RestoreInto()).
  explicit Puller(StagePtr<T> stage, std::optional<T> ahead = std::nullopt)
      : stage_(std::move(stage)) {
    if (ahead.has_value()) ready_.emplace(Item(std::move(ahead)));
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

  // The state behind the last element Pop() returned (see the file comment).
  // Waits for a Next() in progress to return. The chain's error if it
  // failed; CANCELLED after Cancel().
  absl::StatusOr<std::string> SaveState() {
    std::optional<Item> ahead;
    {
      absl::MutexLock lock(&mu_);
      pause_ = true;
      mu_.Await(absl::Condition(this, &Puller::IdleOrCancelled));
      if (cancel_) {
        pause_ = false;
        return CancelledError();
      }
      ahead = ready_.has_value() ? ready_ : terminal_;
    }
    // The pulling thread waits while pause_ is set: the chain is ours
    // (stage_mu_ keeps Shutdown() from destroying it meanwhile).
    absl::StatusOr<std::string> state = CancelledError();
    {
      absl::MutexLock lock(&stage_mu_);
      if (stage_ != nullptr) state = SaveStateOf(*stage_, ahead);
    }
    absl::MutexLock lock(&mu_);
    pause_ = false;
    return state;
  }

  // Reads `state` (SaveState()'s) into `stage`, which was not read from, and
  // sets `*ahead` to the element the saved puller had pulled ahead, if any.
  // INVALID_ARGUMENT for a state of another pipeline (naming the first stage
  // that differs), DATA_LOSS for a damaged one; an error of the stages.
  static absl::Status RestoreInto(Stage<T>& stage, std::string_view state,
                                  std::optional<T>* ahead) {
    ahead->reset();
    DATAECHO_ASSIGN_OR_RETURN(StateReader r, StateReader::Parse(state));
    StateWriter here;
    DATAECHO_RETURN_IF_ERROR(stage.SaveState(here));
    here.BeginStage(kSection, 0);
    DATAECHO_RETURN_IF_ERROR(CompareShapes(r.shape(), here.shape()));
    DATAECHO_RETURN_IF_ERROR(stage.RestoreState(r));
    DATAECHO_RETURN_IF_ERROR(r.status());
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(kSection));
    if (r.Bool()) {
      std::vector<T> items;
      DATAECHO_RETURN_IF_ERROR(stage.Reread(r, 1, &items));
      DATAECHO_RETURN_IF_ERROR(r.status());
      if (items.size() != 1) {
        return absl::DataLossError("pipeline state: the element pulled ahead was not read again");
      }
      ahead->emplace(std::move(items[0]));
    }
    DATAECHO_RETURN_IF_ERROR(r.status());
    return r.Finish();
  }

  // The chain's state, then the puller's section: `ahead`, the element pulled
  // ahead (none if it is std::nullopt or the end; an error is returned).
  static absl::StatusOr<std::string> SaveStateOf(Stage<T>& stage,
                                                 const std::optional<Item>& ahead) {
    if (ahead.has_value() && !ahead->ok()) return ahead->status();
    StateWriter w;
    DATAECHO_RETURN_IF_ERROR(stage.SaveState(w));
    w.BeginStage(kSection, 0);
    const bool has = ahead.has_value() && (*ahead)->has_value();
    w.Bool(has);
    if (has) {
      const T* item = &***ahead;
      DATAECHO_RETURN_IF_ERROR(stage.SaveRefs(std::span<const T* const>(&item, 1), w));
    }
    return w.Finish();
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
  // The pulling thread may call Next().
  bool MayPull() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || (!ready_.has_value() && !pause_);
  }
  // The pulling thread is not inside Next() (and will not enter it while pause_).
  bool IdleOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancel_ || !in_next_; }

  void Run() {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &Puller::MayPull));
        if (cancel_) return;
        in_next_ = true;
      }
      // stage_ is only reset after this thread is joined.
      const int64_t t0 = internal::NowNanos();
      Item item = stage_->Next();  // NOLINT(clang-analyzer-core.CallAndMessage)
      const int64_t waited = internal::NowNanos() - t0;
      absl::MutexLock lock(&mu_);
      in_next_ = false;
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
  bool pause_ ABSL_GUARDED_BY(mu_) = false;    // SaveState() runs: do not pull
  bool in_next_ ABSL_GUARDED_BY(mu_) = false;  // the pulling thread is in Next()
  internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started after everything above exists
};

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PULLER_H_
