// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/map_workers.h: the worker pool of a parallel Map (map.h, which
// describes it): workers claim batches of inputs, apply fn and hand results
// over; the consumer takes them. It stands on the run-ahead core
// (internal/run_ahead.h: the lock, the window's count, the waits, cancel and
// stop) and on SnapshottedInput (internal/snapshotted_input.h: the pull lock
// and the input's snapshots for checkpoints). Not part of the public API.
//
//   internal::MapWorkers<In, Out> pool(input, fn, name, deterministic, buffer, totals, busy);
//   pool.Start(parallelism);  // Next(): start, then take
//   pool.Grow(more);          // more workers while they run (MapOptions::parallelism_control)
//   absl::StatusOr<std::optional<Out>> r = pool.Next();
//
// Thread safety: Cancel() and StickyError() are thread-safe; the rest is the
// consumer's (one thread at a time, as every stage).
#ifndef DATAECHO_INTERNAL_MAP_WORKERS_H_
#define DATAECHO_INTERNAL_MAP_WORKERS_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/map_refs.h"
#include "dataecho/internal/map_tuning.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/internal/ring_queue.h"
#include "dataecho/internal/run_ahead.h"
#include "dataecho/internal/snapshotted_input.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/internal/taken_run.h"
#include "dataecho/stage.h"
#include "dataecho/stage_kit.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

template <typename In, typename Out>
class MapWorkers {
 public:
  using Fn = std::function<absl::StatusOr<Out>(In)>;
  using Item = absl::StatusOr<std::optional<Out>>;
  using Refs = MapRefs<In, Out>;

  // Everything referenced must outlive the pool (Join() before it goes).
  MapWorkers(Stage<In>& input, const Fn& fn, std::string name, bool deterministic, int buffer,
             StageTotals<Counter>& totals, SharedCounter& busy_ns)
      : input_(input),
        fn_(fn),
        name_(std::move(name)),
        deterministic_(deterministic),
        buffer_(buffer),
        totals_(totals),
        busy_ns_(busy_ns),
        core_(1) {}

  // Whether the workers run (started and not stopped by a Restart()).
  bool running() const { return !workers_.empty(); }
  // The pull lock: one worker pulls from the input at a time (SaveRefs/Reread too).
  internal::Mutex& input_mu() { return snapshotted_.pull_mu(); }

  void Start(int parallelism) {
    if (!workers_.empty()) return;
    SetParallelism(parallelism);
    snapshotted_.Start(input_);  // the base snapshot: no pull yet
    for (int i = 0; i < parallelism; ++i) workers_.emplace_back([this] { Work(); });
  }
  // More workers while they run (the window grows with them); before Start()
  // or after a Restart() the next Start() takes the count.
  void Grow(int parallelism) {
    if (workers_.empty() || !SetParallelism(parallelism)) return;
    while (static_cast<int>(workers_.size()) < parallelism)
      workers_.emplace_back([this] { Work(); });
  }
  // The consumer takes up to RunAhead::TakeRun() results per lock and returns
  // them one by one without it; they count against the window until its next lock.
  Item Next() {
    if (!taken_.empty()) return PopTaken();
    internal::MutexLock lock(&core_.mu());
    taken_.ReleaseLocked(core_);
    if (!core_.ReadyLocked()) {
      const int64_t waited = core_.consumer_wait_ns();
      core_.AwaitReady(RunAhead::kNoDeadline);
      totals_.consumer_wait_ns.Add(core_.consumer_wait_ns() - waited);
    }
    return TakeLocked();
  }
  bool TryNext(Item* out) {
    if (!taken_.empty()) {
      internal::AssignInPlace(out, [&] { return PopTaken(); });
      return true;
    }
    internal::MutexLock lock(&core_.mu());
    taken_.ReleaseLocked(core_);
    if (!core_.ReadyLocked()) return false;
    internal::AssignInPlace(out, [&] { return TakeLocked(); });
    return true;
  }
  void Cancel() { core_.Cancel(); }
  void Join() {
    for (std::thread& t : workers_) t.join();
  }
  // What makes Restart() fail: a cancel, an fn error returned, an input error.
  absl::Status StickyError() const {
    internal::MutexLock lock(&core_.mu());
    return StickyErrorLocked();
  }
  // Restart(): lets the workers finish the calls in flight and drops their
  // results (the rest of the epoch); the next Start() starts them anew.
  absl::Status Stop() {
    {
      internal::MutexLock lock(&core_.mu());
      DATAECHO_RETURN_IF_ERROR(StickyErrorLocked());
      core_.BeginStop();  // the workers stop at their next look at the stage
    }
    for (std::thread& t : workers_) t.join();
    workers_.clear();  // the next Next() starts them again
    {
      internal::MutexLock lock(&core_.mu());
      if (core_.CancelledLocked()) return CancelledError();
      core_.EndStop();
      // No worker runs: drop what they took and made (the rest of the epoch).
      slots_.clear();
      done_.clear();
      taken_.Clear();
      filled_ = 0;
      next_seq_ = next_out_ = 0;
      terminal_seq_ = kNone;
      terminal_.reset();
    }
    snapshotted_.Reset();
    return absl::OkStatus();
  }

  // The input's state: before the workers start the input's own; with
  // workers, the newest snapshot the consumer has passed (SaveOwn() writes
  // the count and fingerprint fold of the results taken since).
  absl::Status SaveInput(StateWriter& w) {
    {
      internal::MutexLock lock(&core_.mu());
      if (core_.CancelledLocked()) return CancelledError();
      if (!failed_.ok()) return CannotSaveAfterError(name_, failed_);
      if (terminal_.has_value() && !terminal_->ok() && next_out_ == terminal_seq_ &&
          taken_.empty()) {
        return CannotSaveAfterError(name_, terminal_->status());
      }
    }
    return snapshotted_.SaveInput(!workers_.empty(), input_, w);
  }
  absl::Status SaveOwn(StateWriter& w) const { return snapshotted_.SaveOwn(w); }
  // Pulls again the inputs of the results taken after the snapshot, and
  // drops them (fn is not applied).
  absl::Status RestoreOwn(StateReader& r) {
    return snapshotted_.RestoreOwn(r, input_, name_,
                                   [](const In& v) { return Refs::InputFingerprint(v); });
  }

 private:
  static constexpr int64_t kNone = INT64_MAX;

  // The next ready result, if it is one fn made (not an fn error).
  Item* FrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_.mu()) {
    if (deterministic_) return filled_ > 0 ? &*slots_.front() : nullptr;
    return done_.empty() ? nullptr : &done_.front();
  }
  void PopFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_.mu()) {
    if (deterministic_) {
      slots_.pop_front();
      --filled_;
    } else {
      done_.pop_front();
    }
    ++next_out_;
  }
  // Returns the first of up to TakeRun() ready results and keeps the rest in
  // taken_ (up to an fn error, which the next lock returns).
  // REQUIRES: core_.ReadyLocked().
  Item TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_.mu()) {
    if (core_.CancelledLocked()) return CancelledError();
    if (!failed_.ok()) return failed_;
    if (next_out_ == terminal_seq_) return *terminal_;  // end of stream or input error: sticky
    Item* front = FrontLocked();
    if (!front->ok()) {  // fn failed for this element: sticky from here on
      failed_ = front->status();
      PopFrontLocked();
      core_.Took(1);
      core_.Released(1);
      slots_.clear();
      done_.clear();
      core_.Halt();
      return failed_;
    }
    taken_.TakeLocked(
        core_,
        [&]() -> Item* {  // up to the end or an fn error
          Item* next = next_out_ == terminal_seq_ ? nullptr : FrontLocked();
          return next != nullptr && next->ok() ? next : nullptr;
        },
        [&] { PopFrontLocked(); });
    if (next_out_ == terminal_seq_) core_.Ended();
    return PopTaken();
  }
  // The consumer returns a result it took (its fingerprint and totals).
  Item PopTaken() {
    if (core_.cancelled()) return CancelledError();
    Item item = taken_.Pop();
    snapshotted_.Took(Refs::OutputFingerprint(**item));
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<Out>::ByteSize(**item)));
    return item;
  }

  // Sets the workers (and the window) if more: false if not.
  bool SetParallelism(int parallelism) {
    internal::MutexLock lock(&core_.mu());
    if (parallelism <= parallelism_ && !workers_.empty()) return false;
    parallelism_ = parallelism;
    core_.SetProducers(parallelism_);
    core_.SetDepth(MapWindow(parallelism_, buffer_, batch_));
    return true;
  }
  // A worker that finds no room waits until there is room for a batch (or
  // half the window): one wake-up per batch, not per element.
  int64_t RoomWantedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_.mu()) {
    return std::max<int64_t>(1, std::min<int64_t>(batch_, core_.depth() / 2));
  }
  absl::Status StickyErrorLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_.mu()) {
    if (core_.CancelledLocked()) return CancelledError();
    if (!failed_.ok()) return failed_;
    if (terminal_.has_value() && !terminal_->ok()) return terminal_->status();
    return absl::OkStatus();
  }

  // Reserves room in the window and pulls a batch of inputs into `batch`,
  // numbered from `first_seq` in the order they were pulled: false when
  // there is nothing more to take.
  bool Claim(std::vector<In>& batch, int64_t& first_seq) {
    int64_t reserved = 0;
    {
      // Room is waited for without the pull lock (the consumer may need it
      // for SaveRefs while it has not yet made room).
      internal::MutexLock lock(&core_.mu());
      if (terminal_seq_ != kNone) return false;
      reserved = core_.Reserve(batch_, RoomWantedLocked());
      if (reserved == 0) return false;  // stopped
      if (terminal_seq_ != kNone) {
        core_.Made(reserved, 0);
        return false;
      }
    }
    std::optional<absl::StatusOr<std::optional<In>>> terminal;  // of the input
    snapshotted_.PullRun(
        input_,
        {.want = static_cast<size_t>(reserved),
         .max_ns = kMapBatchNanos,
         .snapshot = deterministic_},
        batch, terminal, [&](std::vector<In>& values, auto& end, const auto& times) {
          totals_.input_wait_ns.Add(times.blocked);  // one writer at a time: the pull lock
          internal::MutexLock lock(&core_.mu());
          first_seq = next_seq_;
          next_seq_ += static_cast<int64_t>(values.size());
          core_.Made(reserved, static_cast<int64_t>(values.size()));
          if (!core_.StoppedLocked() && deterministic_) {
            slots_.resize(static_cast<size_t>(next_seq_ - next_out_));
          }
          if (end.has_value()) {
            terminal_ = end->ok() ? Item(std::nullopt) : Item(end->status());
            terminal_seq_ = next_seq_;
            if (next_out_ == terminal_seq_) core_.Ended();
          }
        });
    return !batch.empty();
  }

  // Hands results [first_seq, first_seq + out.size()) to the consumer: false
  // if the stage stopped (cancel, an fn error returned, a Restart()). At the
  // end of a batch of `batch_size` elements, `cost_ns` is what the batch cost
  // (pulling and fn), from which the next batches are sized.
  bool Publish(int64_t first_seq, std::vector<Item>& out, int64_t busy_ns, int64_t cost_ns,
               size_t batch_size) {
    busy_ns_.Add(busy_ns);
    internal::MutexLock lock(&core_.mu());
    if (core_.StoppedLocked()) return false;
    for (size_t i = 0; i < out.size(); ++i) {
      if (deterministic_) {
        slots_[static_cast<size_t>(first_seq + static_cast<int64_t>(i) - next_out_)] =
            std::move(out[i]);
      } else {
        done_.push_back(std::move(out[i]));
      }
    }
    if (batch_size > 0) {  // the cost of an element: pulling it and fn
      const int64_t cost = cost_ns / static_cast<int64_t>(batch_size);
      cost_ns_ = cost_ns_ == 0 ? cost : (3 * cost_ns_ + cost) / 4;
      batch_ = MapBatchSize(cost_ns_);
      core_.SetDepth(MapWindow(parallelism_, buffer_, batch_));
    }
    int64_t ready = static_cast<int64_t>(done_.size());
    if (deterministic_) {  // results in order: those up to the first still in fn
      while (filled_ < static_cast<int64_t>(slots_.size()) &&
             slots_[static_cast<size_t>(filled_)].has_value()) {
        ++filled_;
      }
      ready = filled_;
    }
    core_.Pushed(ready, static_cast<int64_t>(out.size()), busy_ns / std::max(1, parallelism_));
    return true;
  }

  void Work() {
    StartPipelineThread("map worker");
    std::vector<In> batch;
    std::vector<Item> out;
    while (true) {
      batch.clear();
      int64_t first_seq = 0;
      const int64_t claimed = NowNanos();
      if (!Claim(batch, first_seq)) return;
      int64_t cost_ns = NowNanos() - claimed;  // pulling, blocked or not
      // fn on the batch; results go out at its end, or sooner if it runs long.
      out.clear();
      int64_t busy = 0, published = 0;
      int64_t t = NowNanos(), flushed = t;
      int64_t run_begin = t;  // the timeline: one span per run of calls published together
      for (size_t i = 0; i < batch.size(); ++i) {
        absl::StatusOr<Out> result = Refs::Apply(fn_, std::move(batch[i]));
        const int64_t now = NowNanos();
        busy += now - t;
        t = now;
        out.push_back(result.ok() ? Item(std::optional<Out>(*std::move(result)))
                                  : Item(result.status()));
        const bool last = i + 1 == batch.size();
        if (last || now - flushed >= kMapBatchNanos) {
          if (TraceEnabled()) [[unlikely]] {
            TraceArg calls;
            calls.count = static_cast<int64_t>(out.size());
            TraceComplete("map call", "map", run_begin, now, std::move(calls));
          }
          cost_ns += busy;
          if (!Publish(first_seq + published, out, busy, cost_ns, last ? batch.size() : 0)) return;
          published += static_cast<int64_t>(out.size());
          out.clear();
          busy = 0;
          flushed = now;
          run_begin = TraceEnabled() ? NowNanos() : now;
        }
      }
    }
  }

  Stage<In>& input_;
  const Fn& fn_;
  const std::string name_;
  const bool deterministic_;
  const int buffer_;
  StageTotals<Counter>& totals_;  // one writer each (input_wait: the pull lock)
  SharedCounter& busy_ns_;
  // The pull lock, the input's snapshots, what the consumer took (checkpoints).
  SnapshottedInput<In> snapshotted_;
  // The lock (mu()) and the window: reserved by claims, made, not yet taken.
  mutable RunAhead core_;
  // Deterministic: results of [next_out_, next_seq_), filled as they finish;
  // the first filled_ of them are ready.
  RingQueue<std::optional<Item>> slots_ ABSL_GUARDED_BY(core_.mu());
  int64_t filled_ ABSL_GUARDED_BY(core_.mu()) = 0;
  TakenRun<Item> taken_;                              // the consumer's: taken, not yet returned
  RingQueue<Item> done_ ABSL_GUARDED_BY(core_.mu());  // not deterministic: in completion order
  int64_t next_seq_ ABSL_GUARDED_BY(core_.mu()) = 0;  // sequence number of the next input
  int64_t next_out_ ABSL_GUARDED_BY(core_.mu()) = 0;  // results the consumer took so far
  // Position of the end of stream or the input's error.
  int64_t terminal_seq_ ABSL_GUARDED_BY(core_.mu()) = kNone;
  std::optional<Item> terminal_ ABSL_GUARDED_BY(core_.mu());
  int parallelism_ ABSL_GUARDED_BY(core_.mu()) = 0;  // the workers (Start(), Grow())
  absl::Status failed_ ABSL_GUARDED_BY(core_.mu());  // first error returned by fn
  int64_t cost_ns_ ABSL_GUARDED_BY(core_.mu()) = 0;  // per element, averaged over batches
  int batch_ ABSL_GUARDED_BY(core_.mu()) = 1;        // elements per batch (MapBatchSize)
  // The consumer thread starts them, Stop() and Join() join them.
  std::vector<std::thread> workers_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MAP_WORKERS_H_
