// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/map_workers.h: the worker pool of a parallel Map (map.h, which
// describes it): workers claim batches of inputs, apply fn and hand results
// over; the consumer takes them; and the pool's input snapshots for
// checkpoints (internal/input_snapshots.h). Not part of the public API.
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
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/internal/map_refs.h"
#include "dataecho/internal/map_tuning.h"
#include "dataecho/internal/ring_queue.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/stage_kit.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

template <typename In, typename Out>
class MapWorkers {
 public:
  using Fn = std::function<absl::StatusOr<Out>(In)>;
  using Item = absl::StatusOr<std::optional<Out>>;

  // Everything referenced must outlive the pool (Join() before it goes).
  MapWorkers(Stage<In>& input, const Fn& fn, std::string name, bool deterministic, int buffer,
             StageTotals<Counter>& totals, SharedCounter& busy_ns)
      : input_(input),
        fn_(fn),
        name_(std::move(name)),
        deterministic_(deterministic),
        buffer_(buffer),
        totals_(totals),
        busy_ns_(busy_ns) {}

  // Whether the workers run (started and not stopped by a Restart()).
  bool running() const { return !workers_.empty(); }
  // The pull lock: one worker pulls from the input at a time (SaveRefs/Reread too).
  absl::Mutex& input_mu() { return input_mu_; }

  void Start(int parallelism) {
    if (!workers_.empty()) return;
    SetParallelism(parallelism);
    // The base snapshot: the input as the workers find it (no pull yet).
    snapshots_.Take(0, [this](StateWriter& w) { return input_.SaveState(w); });
    for (int i = 0; i < parallelism; ++i) workers_.emplace_back([this] { Work(); });
  }
  // More workers while they run (the window grows with them); before Start()
  // or after a Restart() the next Start() takes the count.
  void Grow(int parallelism) {
    if (workers_.empty() || !SetParallelism(parallelism)) return;
    while (static_cast<int>(workers_.size()) < parallelism)
      workers_.emplace_back([this] { Work(); });
  }
  Item Next() {
    absl::MutexLock lock(&mu_);
    if (!ReadyLocked()) WaitReady();
    return TakeLocked();
  }
  bool TryNext(Item* out) {
    absl::MutexLock lock(&mu_);
    if (!ReadyLocked()) return false;
    *out = TakeLocked();
    return true;
  }
  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
    consumer_cv_.SignalAll();
    room_cv_.SignalAll();
  }
  void Join() {
    for (std::thread& t : workers_) t.join();
  }
  // What makes Restart() fail: a cancel, an fn error returned, an input error.
  absl::Status StickyError() const {
    absl::MutexLock lock(&mu_);
    return StickyErrorLocked();
  }
  // Restart(): lets the workers finish the calls in flight and drops their
  // results (the rest of the epoch); the next Start() starts them anew.
  absl::Status Stop() {
    {
      absl::MutexLock lock(&mu_);
      DATAECHO_RETURN_IF_ERROR(StickyErrorLocked());
      restarting_ = true;  // the workers stop at their next look at the stage
      room_cv_.SignalAll();
    }
    for (std::thread& t : workers_) t.join();
    workers_.clear();  // the next Next() starts them again
    {
      absl::MutexLock lock(&mu_);
      restarting_ = false;
      if (cancel_) return CancelledError();
      // No worker runs: drop what they took and made (the rest of the epoch).
      slots_.clear();
      done_.clear();
      next_seq_ = next_out_ = 0;
      terminal_seq_ = kNone;
      terminal_.reset();
      taken_fps_.Reset();
    }
    snapshots_.Reset();
    return absl::OkStatus();
  }
  absl::Status AfterError(const absl::Status& s) const { return CannotSaveAfterError(name_, s); }

  // The input's state: before the workers start the input's own; with
  // workers, the newest snapshot the consumer has passed, and in *skip and
  // *fold the count and fingerprint fold of the results taken since.
  absl::Status SaveInput(StateWriter& w, int64_t* skip_out, uint32_t* fold_out) {
    int64_t consumed = 0;
    {
      absl::MutexLock lock(&mu_);
      if (cancel_) return CancelledError();
      if (!failed_.ok()) return AfterError(failed_);
      if (terminal_.has_value() && !terminal_->ok() && next_out_ == terminal_seq_) {
        return AfterError(terminal_->status());
      }
      consumed = next_out_;
    }
    if (workers_.empty()) {
      *skip_out = 0;
      *fold_out = 0;
      return input_.SaveState(w);
    }
    absl::StatusOr<int64_t> skip = snapshots_.WriteBase(consumed, w);
    if (!skip.ok()) return skip.status();
    *skip_out = *skip;
    absl::MutexLock lock(&mu_);  // taken_fps_ is the consumer's, kept under mu_
    taken_fps_.DropBefore(consumed - *skip);
    *fold_out = taken_fps_.Fold(consumed - *skip);
    return absl::OkStatus();
  }
  // A restore: the counts start at 0.
  void ResetCheckpoint() {
    snapshots_.Reset();
    absl::MutexLock lock(&mu_);
    taken_fps_.Reset();
  }

 private:
  static constexpr int64_t kNone = INT64_MAX;
  // Fingerprints kept before older ones are dropped (those before the base snapshot).
  static constexpr size_t kFingerprintsKept = 4096;

  // The consumer may take a result (or an end, an error, a cancel).
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_ || !failed_.ok() || next_out_ == terminal_seq_) return true;
    if (deterministic_) return !slots_.empty() && slots_.front().has_value();
    return !done_.empty();
  }

  void WaitReady() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t t0 = NowNanos();
    consumer_waiting_ = true;
    while (!ReadyLocked()) consumer_cv_.Wait(&mu_);
    consumer_waiting_ = false;
    totals_.consumer_wait_ns.Add(NowNanos() - t0);
  }

  // Returns the result the consumer may take. REQUIRES: ReadyLocked().
  Item TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (!failed_.ok()) return failed_;
    if (next_out_ == terminal_seq_) return *terminal_;  // end of stream or input error: sticky
    Item item;
    if (deterministic_) {
      item = *std::move(slots_.front());
      slots_.pop_front();
    } else {
      item = std::move(done_.front());
      done_.pop_front();
    }
    ++next_out_;
    if (!item.ok()) {  // fn failed for this element: sticky from here on
      failed_ = item.status();
      slots_.clear();
      done_.clear();
      room_cv_.SignalAll();
      return failed_;
    }
    if (room_waiting_ && RoomLocked() >= RoomWantedLocked()) room_cv_.Signal();
    taken_fps_.Add(MapRefs<In, Out>::OutputFingerprint(**item));
    if (taken_fps_.size() > kFingerprintsKept) {
      taken_fps_.DropBefore(snapshots_.BasePulled(next_out_));
    }
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<Out>::ByteSize(**item)));
    return item;
  }

  // Sets the workers (and wakes those waiting for room) if more: false if not.
  bool SetParallelism(int parallelism) {
    absl::MutexLock lock(&mu_);
    if (parallelism <= parallelism_ && !workers_.empty()) return false;
    parallelism_ = parallelism;
    room_cv_.SignalAll();
    return true;
  }
  int64_t RoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return MapWindow(parallelism_, buffer_, batch_) - (next_seq_ - next_out_);
  }
  // A worker that found no room sleeps until there is room for a batch (or
  // half the window): one wake-up per batch, not per element.
  int64_t RoomWantedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t window = MapWindow(parallelism_, buffer_, batch_);
    return std::max<int64_t>(1, std::min<int64_t>(batch_, window / 2));
  }
  // The workers stop: a cancel, an fn error returned, or a Restart().
  bool StoppedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !failed_.ok() || restarting_;
  }
  absl::Status StickyErrorLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (!failed_.ok()) return failed_;
    if (terminal_.has_value() && !terminal_->ok()) return terminal_->status();
    return absl::OkStatus();
  }

  // Takes a batch of inputs (one worker at a time, in sequence order): false
  // when there is nothing more to take.
  bool Claim(std::vector<In>& batch, int64_t& first_seq, int64_t& cost_ns) {
    // Waits for room without the pull lock (the consumer may need it for
    // SaveRefs while it has not yet made room), then takes the lock and
    // looks again (another worker may have claimed the room meanwhile).
    int64_t want = 0;
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        if (!StoppedLocked() && terminal_seq_ == kNone && RoomLocked() < RoomWantedLocked()) {
          room_waiting_ = true;
          while (!StoppedLocked() && terminal_seq_ == kNone && RoomLocked() < RoomWantedLocked()) {
            room_cv_.Wait(&mu_);
          }
          room_waiting_ = false;
        }
        if (StoppedLocked() || terminal_seq_ != kNone) return false;
      }
      input_mu_.Lock();
      absl::MutexLock lock(&mu_);
      if (StoppedLocked() || terminal_seq_ != kNone) {
        input_mu_.Unlock();
        return false;
      }
      if (RoomLocked() < RoomWantedLocked()) {
        input_mu_.Unlock();
        continue;
      }
      first_seq = next_seq_;
      want = std::min<int64_t>(batch_, RoomLocked());
      break;
    }
    std::optional<Item> terminal;
    int64_t blocked = 0;
    const int64_t start = NowNanos();
    int64_t now = start;
    while (static_cast<int64_t>(batch.size()) < want) {
      absl::StatusOr<std::optional<In>> in;
      blocked += PullTimed(input_, &in);
      now = NowNanos();
      if (!in.ok() || !in->has_value()) {
        terminal = in.ok() ? Item(std::nullopt) : Item(in.status());
        break;
      }
      batch.push_back(*std::move(*in));
      if (now - start >= kMapBatchNanos) break;  // a slow input: hand over what we have
    }
    totals_.input_wait_ns.Add(blocked);  // one writer at a time: input_mu_
    cost_ns = now - start;               // pulling, blocked or not
    int64_t consumed = 0;
    const bool ended = terminal.has_value();
    {
      absl::MutexLock lock(&mu_);
      next_seq_ = first_seq + static_cast<int64_t>(batch.size());
      consumed = next_out_;
      if (!StoppedLocked() && deterministic_) {
        slots_.resize(static_cast<size_t>(next_seq_ - next_out_));
      }
      if (terminal.has_value()) {
        terminal_ = std::move(terminal);
        terminal_seq_ = next_seq_;
        if (consumer_waiting_ && ReadyLocked()) consumer_cv_.Signal();
      }
    }
    // A snapshot of the input after next_seq_ pulls (still holding the pull lock).
    if (!ended && deterministic_ && !batch.empty() && snapshots_.Due(consumed)) {
      const int64_t pulled = first_seq + static_cast<int64_t>(batch.size());
      snapshots_.Take(pulled, [this](StateWriter& w) { return input_.SaveState(w); });
    }
    input_mu_.Unlock();
    return !batch.empty();
  }

  // Hands results [first_seq, first_seq + out.size()) to the consumer: false
  // if the stage stopped (cancel or an fn error returned). At the end of a
  // batch of `batch_size` elements, `cost_ns` is what the batch cost (pulling
  // and fn), from which the next batches are sized.
  bool Publish(int64_t first_seq, std::vector<Item>& out, int64_t busy_ns, int64_t cost_ns,
               size_t batch_size) {
    busy_ns_.Add(busy_ns);
    absl::MutexLock lock(&mu_);
    if (StoppedLocked()) return false;
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
    }
    if (consumer_waiting_ && ReadyLocked()) consumer_cv_.Signal();
    return true;
  }

  void Work() {
    StartPipelineThread("map worker");
    std::vector<In> batch;
    std::vector<Item> out;
    while (true) {
      batch.clear();
      int64_t first_seq = 0, cost_ns = 0;
      if (!Claim(batch, first_seq, cost_ns)) return;
      // fn on the batch; results go out at its end, or sooner if it runs long.
      out.clear();
      int64_t busy = 0, published = 0;
      int64_t t = NowNanos(), flushed = t;
      int64_t run_begin = t;  // the timeline: one span per run of calls published together
      for (size_t i = 0; i < batch.size(); ++i) {
        absl::StatusOr<Out> result = MapRefs<In, Out>::Apply(fn_, std::move(batch[i]));
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
  StageTotals<Counter>& totals_;  // one writer each (input_wait: input_mu_)
  SharedCounter& busy_ns_;
  absl::Mutex input_mu_;      // one worker pulls from the input at a time (SaveRefs/Reread too)
  InputSnapshots snapshots_;  // checkpoints: the input's state after j pulls
  mutable absl::Mutex mu_;
  absl::CondVar consumer_cv_;  // a result is ready (signalled while consumer_waiting_)
  absl::CondVar room_cv_;      // room for a batch (signalled while room_waiting_)
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  bool room_waiting_ ABSL_GUARDED_BY(mu_) = false;
  // Deterministic: results of [next_out_, next_seq_), filled as they finish.
  RingQueue<std::optional<Item>> slots_ ABSL_GUARDED_BY(mu_);
  RingQueue<Item> done_ ABSL_GUARDED_BY(mu_);  // not deterministic: in completion order
  // Of the results taken since the base snapshot (checkpoints).
  TakenFingerprints taken_fps_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;          // sequence number of the next input
  int64_t next_out_ ABSL_GUARDED_BY(mu_) = 0;          // results returned so far
  int64_t terminal_seq_ ABSL_GUARDED_BY(mu_) = kNone;  // position of end of stream or the error
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool restarting_ ABSL_GUARDED_BY(mu_) = false;  // Stop() waits for the workers to stop
  int parallelism_ ABSL_GUARDED_BY(mu_) = 0;      // the workers (Start(), Grow())
  absl::Status failed_ ABSL_GUARDED_BY(mu_);      // first error returned by fn
  int64_t cost_ns_ ABSL_GUARDED_BY(mu_) = 0;      // per element, averaged over batches
  int batch_ ABSL_GUARDED_BY(mu_) = 1;            // elements per batch (MapBatchSize)
  // The consumer thread starts them, Stop() and Join() join them.
  std::vector<std::thread> workers_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MAP_WORKERS_H_
