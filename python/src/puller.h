// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/puller.h: the thread that pulls a pipeline's last stage for Python.
//
// Python's next() must be interruptible (Ctrl-C raises KeyboardInterrupt in the
// waiting thread) and must not hold the GIL while it waits. A stage's Next()
// cannot be waited on with a timeout, so a Puller runs it on a thread of its
// own and keeps a few elements ready (`max_ahead`, kPullAhead by default);
// Python waits for the next one in short slices with the GIL released,
// checking for signals between them:
//
//   Puller<Batch> puller(std::move(stage));
//   while (true) {
//     std::optional<Puller<Batch>::Item> item = puller.Pop(absl::Milliseconds(50));
//     if (!item.has_value()) { /* not yet: check signals, wait again */ continue; }
//     ...   // an element, the end (sticky) or an error (sticky)
//   }
//
// Why more than one: with a single slot, the pulling thread stops at every
// element until Python takes it, and each hand-off then costs two thread
// wake-ups (Python's, then the puller's) during which neither side works. With
// two or more, the pipeline keeps running while Python handles an element, so
// a loop faster than the pipeline runs at the pipeline's own speed. Its stats
// row ("python") counts the elements Python took and the time it waited for
// them (consumer_wait); input_wait is the puller's time inside the last stage.
//
// HAND-OFF. A Pop() that finds an element ready takes it without waiting (the
// binding does so with the GIL held). One that finds none waits first for all
// slots but one (`max_ahead` - 1, at least one element), then takes them one
// Pop() each: when the loop is faster than the pipeline, the pulling thread
// wakes it once per `max_ahead` - 1 elements instead of once per element (a
// wake-up costs the pulling thread a system call, and the woken thread may
// take its core for a while). It waits so for at most 1.5 times what the
// pipeline took to make that many at its recent pace, and not at all before
// the first element or when the pace is slower than kMaxHold for them: then
// it is woken by the next element, as the end, an error or Cancel() always
// wake it.
//
// SPIN. Where the pipeline makes an element in at most kMaxSpin (its recent
// pace), a wake-up would cost the pulling thread a system call per element or
// two, a large part of the element's own time. There a Pop() that finds none
// ready first polls for one, without the lock, for up to 1.5 times that pace,
// yielding its core to any other runnable thread between polls; it sleeps as
// above only if none came. (benchmarks/python/vs_dataloader.py: 256-row batches
// every ~40 us went from 0.81 to the python_vs_cpp in docs/benchmarks.md.)
//
// CHECKPOINTS. SaveState() is the position behind the last element Python
// took: it pauses the pulling thread between two Next() calls, writes the
// chain's state and then a section of its own ("python") holding references to
// the elements it pulled ahead, oldest first (the last stage's SaveRefs()). So
// every element pulled ahead must be one the last stage can still reference
// (a Batch or PaddedBatch: one of its last 16 batches). RestoreInto() reads
// such a state into a chain that was not read from and gives back those
// elements, which a new Puller hands out first:
//
//   std::vector<Example> ahead;
//   absl::Status s = Puller<Example>::RestoreInto(*stage, state, &ahead);
//   Puller<Example> puller(std::move(stage), std::move(ahead));
//
// The section is a count then the references: a state saved with one element
// ahead (or none) reads the same whatever max_ahead the restoring puller has.
//
// Thread safety: Pop() and SaveState() from one thread at a time; Cancel(),
// AppendStats() and Shutdown() from any thread. Shutdown() joins the thread
// and destroys the stages: call it without the GIL (a map function may be
// waiting for it).
#ifndef DATAECHO_PYTHON_SRC_PULLER_H_
#define DATAECHO_PYTHON_SRC_PULLER_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/stage_kit.h"
#include "dataecho/status_macros.h"

namespace dataecho::python {

// Elements a Puller keeps ready by default (see the file comment).
inline constexpr size_t kPullAhead = 3;
// The longest a Pop() waits for more than one element (HAND-OFF above).
inline constexpr absl::Duration kMaxHold = absl::Milliseconds(1);
// The slowest pace at which a waiting Pop() polls before it sleeps (SPIN above).
inline constexpr absl::Duration kMaxSpin = absl::Microseconds(100);

template <typename T>
class Puller {
 public:
  using Item = absl::StatusOr<std::optional<T>>;
  // The section the puller adds to the chain's state.
  static constexpr std::string_view kSection = "python";

  // `ahead`: elements to hand out, in order, before the stage's
  // (RestoreInto()). `max_ahead` (>= 1): the most elements kept ready.
  explicit Puller(StagePtr<T> stage, std::vector<T> ahead = {}, size_t max_ahead = kPullAhead)
      : stage_(std::move(stage)),
        max_ahead_(max_ahead < 1 ? 1 : max_ahead),
        wake_at_(max_ahead_ > 2 ? max_ahead_ - 1 : 1) {
    for (T& e : ahead) ready_.push_back(std::move(e));
    available_.store(!ready_.empty(), std::memory_order_relaxed);
    thread_ = std::thread([this] { Run(); });
  }
  ~Puller() { Shutdown(); }
  Puller(const Puller&) = delete;
  Puller& operator=(const Puller&) = delete;

  // The next item if one arrives within `timeout`, else std::nullopt. After
  // the end or an error, returns it again (sticky); after Cancel(), CANCELLED.
  // With a zero `timeout` it never waits (nor reads the clock).
  std::optional<Item> Pop(absl::Duration timeout) {
    const int64_t spun_ns = timeout > absl::ZeroDuration() ? Spin(timeout) : 0;
    absl::MutexLock lock(&mu_);
    totals_.consumer_wait_ns += spun_ns;
    if (!ReadyOrCancelled() && timeout > absl::ZeroDuration()) {
      const int64_t t0 = internal::NowNanos();
      // First for wake_at_ elements, while the pipeline's pace says they come
      // soon (HAND-OFF above), then for one.
      const absl::Duration hold = std::min(timeout, HoldLocked());
      if (hold > absl::ZeroDuration()) {
        mu_.AwaitWithTimeout(absl::Condition(this, &Puller::SeveralReadyOrDone), hold);
      }
      if (!ReadyOrCancelled()) {
        const absl::Duration left = timeout - absl::Nanoseconds(internal::NowNanos() - t0);
        if (left > absl::ZeroDuration()) {
          mu_.AwaitWithTimeout(absl::Condition(this, &Puller::ReadyOrCancelled), left);
        }
      }
      totals_.consumer_wait_ns += internal::NowNanos() - t0;
    }
    if (cancel_) return Item(CancelledError());
    if (!ready_.empty()) {
      Item item(std::optional<T>(std::move(ready_.front())));
      ready_.pop_front();
      UpdateAvailableLocked();
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
      UpdateAvailableLocked();
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
    std::vector<T> ahead;
    {
      absl::MutexLock lock(&mu_);
      pause_ = true;
      mu_.Await(absl::Condition(this, &Puller::IdleOrCancelled));
      if (cancel_) {
        pause_ = false;
        return CancelledError();
      }
      if (terminal_.has_value() && !terminal_->ok()) {
        pause_ = false;
        return terminal_->status();
      }
      ahead.assign(ready_.begin(), ready_.end());  // handles: the payloads are shared
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
  // sets `*ahead` to the elements the saved puller had pulled ahead, oldest
  // first (none if it had none). INVALID_ARGUMENT for a state of another
  // pipeline (naming the first stage that differs), DATA_LOSS for a damaged
  // one; an error of the stages.
  static absl::Status RestoreInto(Stage<T>& stage, std::string_view state, std::vector<T>* ahead) {
    ahead->clear();
    DATAECHO_ASSIGN_OR_RETURN(StateReader r, StateReader::Parse(state));
    StateWriter here;
    DATAECHO_RETURN_IF_ERROR(stage.SaveState(here));
    here.BeginStage(kSection, 0);
    DATAECHO_RETURN_IF_ERROR(CompareShapes(r.shape(), here.shape()));
    DATAECHO_RETURN_IF_ERROR(stage.RestoreState(r));
    DATAECHO_RETURN_IF_ERROR(r.status());
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(kSection));
    const uint64_t n = r.Count();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (n > 0) {
      std::vector<T> items;
      DATAECHO_RETURN_IF_ERROR(stage.Reread(r, static_cast<size_t>(n), &items));
      DATAECHO_RETURN_IF_ERROR(r.status());
      if (items.size() != n) {
        return absl::DataLossError(absl::StrCat("pipeline state: ", n, " elements pulled ahead, ",
                                                items.size(), " read again"));
      }
      *ahead = std::move(items);
    }
    DATAECHO_RETURN_IF_ERROR(r.status());
    return r.Finish();
  }

  // The chain's state, then the puller's section: the count of `ahead`, the
  // elements pulled ahead (oldest first), and their references.
  static absl::StatusOr<std::string> SaveStateOf(Stage<T>& stage, std::span<const T> ahead) {
    StateWriter w;
    DATAECHO_RETURN_IF_ERROR(stage.SaveState(w));
    w.BeginStage(kSection, 0);
    w.U64(ahead.size());  // 0 or 1 reads as the Bool the first format wrote
    if (!ahead.empty()) {
      std::vector<const T*> items;
      items.reserve(ahead.size());
      for (const T& e : ahead) items.push_back(&e);
      DATAECHO_RETURN_IF_ERROR(stage.SaveRefs(items, w));
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
    return cancel_ || !ready_.empty() || terminal_.has_value();
  }
  // What a waiting Pop() is woken for first: wake_at_ elements (or fewer
  // after the end or an error).
  bool SeveralReadyOrDone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || ready_.size() >= wake_at_ || terminal_.has_value();
  }
  // How long a Pop() that found nothing ready waits for wake_at_ elements:
  // 1.5 times what the pipeline takes to make them at its recent pace, or
  // zero (wait for one) when that pace is unknown yet or too slow for a
  // wake-up per element to matter (kMaxHold).
  absl::Duration HoldLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (wake_at_ <= 1 || next_ns_ <= 0) return absl::ZeroDuration();
    const absl::Duration hold =
        absl::Nanoseconds(next_ns_ * static_cast<int64_t>(wake_at_) * 3 / 2);
    return hold > kMaxHold ? absl::ZeroDuration() : hold;
  }
  void UpdateAvailableLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    available_.store(ReadyOrCancelled(), std::memory_order_release);
  }
  // SPIN above: polls until Pop() would not wait, for up to spin_ns_ (and
  // `timeout`). Returns the nanoseconds spent.
  int64_t Spin(absl::Duration timeout) const {
    const int64_t limit =
        std::min(spin_ns_.load(std::memory_order_relaxed), absl::ToInt64Nanoseconds(timeout));
    if (limit <= 0 || available_.load(std::memory_order_acquire)) return 0;
    const int64_t t0 = internal::NowNanos();
    int64_t now = t0;
    while (!available_.load(std::memory_order_acquire) && now - t0 < limit) {
      std::this_thread::yield();
      now = internal::NowNanos();
    }
    return now - t0;
  }
  // The pulling thread may call Next().
  bool MayPull() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || (ready_.size() < max_ahead_ && !pause_);
  }
  // The pulling thread is not inside Next() (and will not enter it while pause_).
  bool IdleOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancel_ || !in_next_; }

  void Run() {
    StartPipelineThread("python hand-off");
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
      next_ns_ = next_ns_ <= 0 ? waited : next_ns_ + (waited - next_ns_) / 8;  // recent pace
      spin_ns_.store(next_ns_ <= absl::ToInt64Nanoseconds(kMaxSpin) ? next_ns_ * 3 / 2 : 0,
                     std::memory_order_relaxed);
      if (!item.ok() || !item->has_value()) {
        terminal_ = std::move(item);
        UpdateAvailableLocked();
        return;
      }
      ready_.push_back(**std::move(item));
      UpdateAvailableLocked();
    }
  }

  mutable absl::Mutex stage_mu_;  // guards resetting stage_ against stats and Cancel()
  // Used without stage_mu_ by the pulling thread, which Shutdown() joins first.
  StagePtr<T> stage_;
  const size_t max_ahead_;
  const size_t wake_at_;  // elements a waiting Pop() is woken for: all slots but one
  mutable absl::Mutex mu_;
  std::deque<T> ready_ ABSL_GUARDED_BY(mu_);           // the next elements, oldest first
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);  // the end or the error, after them
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool pause_ ABSL_GUARDED_BY(mu_) = false;    // SaveState() runs: do not pull
  bool in_next_ ABSL_GUARDED_BY(mu_) = false;  // the pulling thread is in Next()
  int64_t next_ns_ ABSL_GUARDED_BY(mu_) = 0;   // a moving average of Next()'s duration
  // What Pop() reads without mu_ (SPIN above): whether it would not wait
  // (ReadyOrCancelled()), and how long it polls (0: it does not).
  std::atomic<bool> available_{false};
  std::atomic<int64_t> spin_ns_{0};
  internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started after everything above exists
};

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PULLER_H_
