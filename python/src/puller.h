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
// HAND-OFF. The elements wait in the run-ahead queue every stage that runs
// ahead stands on (dataecho/internal/run_ahead_queue.h; the policy is in
// dataecho/internal/run_ahead.h): a Pop() that finds an element ready takes
// it without waiting (the binding does so with the GIL held); one that finds
// none watches for the next for a while when the pipeline makes one every
// 100 us or faster, and otherwise sleeps until all slots but one are ready,
// or for at most 1.5 times what the pipeline takes to make them at its recent
// pace (at once when that is over 1 ms): when the loop is faster than the
// pipeline, the pulling thread wakes it once per `max_ahead` - 1 elements
// instead of once per element. The end, an error or Cancel() always wake it.
//
// CHECKPOINTS. SaveState() is the position behind the last element Python
// took: it pauses the pulling thread between two Next() calls (RunAhead::Pause()), writes the
// chain's state and then a section of its own ("python") holding references to
// the elements it pulled ahead, oldest first (the last stage's SaveRefs()). So
// every element pulled ahead must be one the last stage can still reference
// (a Batch or PaddedBatch: one of its last 16 batches). A Pipeline restores
// such a state and ReadAhead() gives back those elements, which a new Puller
// hands out first:
//
//   std::vector<Example> ahead;
//   absl::Status s = pipeline.RestoreStateWith(state, Puller<Example>::kSection,
//       [&](Stage<Example>& last, StateReader& r) {
//         return Puller<Example>::ReadAhead(last, r, &ahead);
//       });
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
#include "dataecho/internal/counter.h"
#include "dataecho/internal/run_ahead_queue.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/stage_kit.h"
#include "dataecho/status_macros.h"

namespace dataecho::python {

// Elements a Puller keeps ready by default (see the file comment).
inline constexpr size_t kPullAhead = 3;

template <typename T>
class Puller {
 public:
  using Item = absl::StatusOr<std::optional<T>>;
  // The section the puller adds to the chain's state.
  static constexpr std::string_view kSection = "python";

  // `ahead`: elements to hand out, in order, before the stage's
  // (ReadAhead()). `max_ahead` (>= 1): the most elements kept ready.
  explicit Puller(StagePtr<T> stage, std::vector<T> ahead = {}, size_t max_ahead = kPullAhead)
      : stage_(std::move(stage)), queue_(static_cast<int64_t>(std::max<size_t>(1, max_ahead))) {
    queue_.Preload(std::move(ahead));
    thread_ = std::thread([this] { Run(); });
  }
  ~Puller() { Shutdown(); }
  Puller(const Puller&) = delete;
  Puller& operator=(const Puller&) = delete;

  // The next item if one arrives within `timeout`, else std::nullopt. After
  // the end or an error, returns it again (sticky); after Cancel(), CANCELLED.
  // With a zero `timeout` it never waits (nor reads the clock).
  std::optional<Item> Pop(absl::Duration timeout) {
    const int64_t deadline = timeout > absl::ZeroDuration()
                                 ? internal::NowNanos() + absl::ToInt64Nanoseconds(timeout)
                                 : 0;
    Item item;
    if (!queue_.TryTake(deadline, &item)) return std::nullopt;
    if (item.ok() && item->has_value()) {
      totals_.elements.Add(1);
      totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**item)));
    }
    return item;
  }

  void Cancel() {
    queue_.core().Cancel();
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
    internal::RunAhead& core = queue_.core();
    std::vector<T> ahead;
    {
      internal::MutexLock lock(&core.mu());
      core.Pause();
      absl::Status refused;
      if (core.CancelledLocked()) {
        refused = CancelledError();
      } else if (queue_.terminal().has_value() && !queue_.terminal()->ok()) {
        refused = queue_.terminal()->status();
      }
      if (!refused.ok()) {
        core.Resume();
        return refused;
      }
      ahead = queue_.Ahead();  // handles: the payloads are shared
    }
    // The pulling thread waits while paused: the chain is ours (stage_mu_
    // keeps Shutdown() from destroying it meanwhile).
    absl::StatusOr<std::string> state = CancelledError();
    {
      absl::MutexLock lock(&stage_mu_);
      if (stage_ != nullptr) state = SaveStateOf(*stage_, ahead);
    }
    internal::MutexLock lock(&core.mu());
    core.Resume();
    return state;
  }

  // Reads the puller's section (SaveStateOf()'s, after the chain's state) of a
  // state being restored into `stage` (Pipeline::RestoreStateWith(state,
  // kSection, ...)): sets `*ahead` to the elements the saved puller had
  // pulled ahead, oldest first (none if it had none), read again by the last
  // stage. DATA_LOSS if fewer come back.
  static absl::Status ReadAhead(Stage<T>& stage, StateReader& r, std::vector<T>* ahead) {
    ahead->clear();
    const uint64_t n = r.Count();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (n == 0) return absl::OkStatus();
    DATAECHO_RETURN_IF_ERROR(stage.Reread(r, static_cast<size_t>(n), ahead));
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (ahead->size() != n) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", n, " elements pulled ahead, ",
                                              ahead->size(), " read again"));
    }
    return absl::OkStatus();
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
    StageStats s = totals_.Report("python", {});
    internal::RunAhead& core = queue_.core();
    internal::MutexLock lock(&core.mu());
    s.consumer_wait = absl::Nanoseconds(core.consumer_wait_ns());
    out->push_back(std::move(s));
  }

 private:
  void Run() {
    StartPipelineThread("python hand-off");
    // One Next() of the chain per element: each is a whole pipeline's step.
    queue_.Produce([this](size_t, std::vector<T>& values, std::optional<Item>& terminal) {
      const int64_t t0 = internal::NowNanos();
      Item item = stage_->Next();  // stage_ is only reset after this thread is joined
      const int64_t ns = internal::NowNanos() - t0;
      totals_.input_wait_ns.Add(ns);
      if (item.ok() && item->has_value()) {
        values.push_back(**std::move(item));
      } else {
        terminal = std::move(item);
      }
      return ns;
    });
  }

  mutable absl::Mutex stage_mu_;  // guards resetting stage_ against stats and Cancel()
  // Used without stage_mu_ by the pulling thread, which Shutdown() joins first.
  StagePtr<T> stage_;
  // The elements ready, the core's lock and waits, pause and cancel.
  mutable internal::RunAheadQueue<T> queue_;
  // One writer each: elements and bytes Pop(), input_wait the pulling thread.
  internal::StageTotals<internal::Counter> totals_;
  std::thread thread_;  // last: started after everything above exists
};

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PULLER_H_
