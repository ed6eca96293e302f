// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// prefetch.h: run the upstream ahead on its own thread.
//
// Prefetch has one producer thread that pulls from its input into a bounded
// queue of `depth` elements; the consumer takes from the queue. This is the
// boundary that lets Echo serve repeats while the upstream keeps reading the
// next fresh items. Every element is queued together with its status, so an
// error arrives after every element produced before it, and stays.
//
//   auto p = dataecho::PrefetchStage<Example>::Make(std::move(decoded), {.depth = 64});
//   if (!p.ok()) return p.status();  // INVALID_ARGUMENT: depth < 1 or a null input
//
// The two threads meet per run of elements, not per element: the consumer
// takes up to depth / 4 queued elements at a time (they still count against
// `depth`); a producer that finds the queue full waits until the consumer has
// taken depth / 8 of them (the next time: until it is half empty) and then
// refills it; a consumer that finds it empty is woken when min(32, depth / 2
// + 1) are queued, or at the first push 50 us into its wait, or at once if the
// producer is slow (over 2 us a pull). Nobody is signalled who does not wait.
// Before sleeping, a side whose peer is fast (the producer pulls under 2 us,
// or the consumer takes every 20 us) watches for it for up to 20 us instead:
// being put to sleep and woken costs more than that on a virtual machine.
//
// Epochs (stage.h): under a Repeat, Restart() stops the producer (it finishes
// the pull in flight), drops what is queued (the rest of the epoch), restarts
// the input, and the next Next() starts the producer again.
//
// Checkpoints (stage.h, docs/checkpoint.md): the queue is not stored. The
// producer keeps a snapshot of its input's state taken after j pulls (at
// most one ahead of the consumer, and one per 100 times its cost:
// internal/input_snapshots.h); SaveState() writes the newest snapshot the
// consumer has passed and the count of elements it took since, which a
// restore pulls again from the input and drops. SaveRefs()/Reread() reach
// the input under the lock the producer holds while pulling (the consumer
// waits for at most one pull).
//
// Stats (stats.h): input_wait = time the producer was blocked on an input
// that had nothing ready; consumer_wait = consumer time blocked on an empty
// queue; threads = 1; extra "producer_blocked_s" = time the producer waited on
// a full queue; "queued" = elements in the queue.
//
// Thread safety: as every stage (stage.h). The producer starts on the first
// Next() or TryNext(); destruction cancels and joins it.
#ifndef DATAECHO_PREFETCH_H_
#define DATAECHO_PREFETCH_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/prefetch_checkpoint.h"
#include "dataecho/internal/prefetch_handoff.h"
#include "dataecho/internal/ring_queue.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

struct PrefetchOptions {
  // Elements buffered ahead of the consumer. >= 1.
  int depth = 16;
  // Name shown in stats.
  std::string name = "prefetch";
  // If set, the number of queued elements is stored here after every push and
  // pop, for other stages to read: e.g. AdaptiveEchoOptions::repeat_gate, to
  // repeat only while the trainer's queue runs low.
  std::shared_ptr<std::atomic<int64_t>> level = nullptr;

  absl::Status Validate() const {
    if (depth < 1) {
      return absl::InvalidArgumentError(fmt::format("prefetch depth must be >= 1, got {}", depth));
    }
    return absl::OkStatus();
  }
};

template <typename T>
class PrefetchStage final : public UnaryStage<T, T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, PrefetchOptions options = {}) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
    DATAECHO_RETURN_IF_ERROR(options.Validate());
    return StagePtr<T>(new PrefetchStage(std::move(input), std::move(options)));
  }

  ~PrefetchStage() override {
    this->Cancel();
    if (producer_.joinable()) producer_.join();
  }

  absl::StatusOr<std::optional<T>> Next() override {
    StartOnce();
    if (!taken_.empty()) return PopTaken();
    absl::MutexLock lock(&mu_);
    ReleaseHeldLocked();
    if (!ReadyOrCancelled()) WaitForElement();
    return TakeLocked();
  }

  // References are the input's: taken under the pull lock (the producer may be pulling).
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    return checkpoint_.SaveRefs(this->input(), items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    return checkpoint_.Reread(this->input(), r, n, out);
  }

  bool TryNext(absl::StatusOr<std::optional<T>>* out) override {
    StartOnce();
    if (!taken_.empty()) {
      *out = PopTaken();
      return true;
    }
    absl::MutexLock lock(&mu_);
    ReleaseHeldLocked();
    if (!ReadyOrCancelled()) return false;
    *out = TakeLocked();
    return true;
  }

 protected:
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
    pushes_.fetch_add(1, std::memory_order_release);
    takes_.fetch_add(1, std::memory_order_release);
    consumer_cv_.SignalAll();
    room_cv_.SignalAll();
  }

  // Restarts with its input (stage.h): a running producer stops first, and
  // what it read ahead (the rest of the epoch) is dropped.
  absl::Status BeforeRestart() override {
    if (!started_) return absl::OkStatus();
    {
      absl::MutexLock lock(&mu_);
      if (cancel_) return CancelledError();
      if (terminal_.has_value() && !terminal_->ok()) return terminal_->status();  // sticky
      restarting_ = true;  // the producer stops at its next look at the queue
      takes_.fetch_add(1, std::memory_order_release);
      room_cv_.SignalAll();
    }
    producer_.join();
    started_ = false;  // the next Next() starts it again
    absl::MutexLock lock(&mu_);
    restarting_ = false;
    if (cancel_) return CancelledError();
    queue_.clear();  // the rest of the epoch
    taken_.clear();
    held_ = 0;
    checkpoint_.Reset();
    terminal_.reset();
    handoff_.ResetWait();
    if (options_.level) options_.level->store(0, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  std::string StateName() const override { return options_.name; }
  // The input's state: the newest snapshot the consumer has passed (or, with
  // no producer running, the input's own), and the elements taken since.
  absl::Status SaveInput(StateWriter& w) override {
    {
      absl::MutexLock lock(&mu_);
      if (terminal_.has_value() && !terminal_->ok() && queue_.empty() && taken_.empty()) {
        return CannotSaveAfterError(options_.name, terminal_->status());
      }
    }
    return checkpoint_.SaveInput(started_, this->input(), w);
  }
  absl::Status SaveOwn(StateWriter& w) override { return checkpoint_.SaveOwn(w); }
  absl::Status RestoreOwn(StateReader& r) override {
    return checkpoint_.RestoreOwn(r, this->input(), options_.name);
  }

  StageStats OwnStats() const override {
    absl::MutexLock lock(&mu_);
    return totals_.Report(
        options_.name, /*threads=*/1,
        {{"depth", options_.depth},
         {"queued", static_cast<double>(queue_.size() + held_)},
         {"producer_blocked_s", static_cast<double>(producer_blocked_ns_) * 1e-9}});
  }

 private:
  using Item = absl::StatusOr<std::optional<T>>;

  // When the two threads meet: internal/prefetch_handoff.h.
  using Handoff = internal::PrefetchHandoff;
  using ProducerWait = Handoff::ProducerWait;

  PrefetchStage(StagePtr<T> input, PrefetchOptions options)
      : UnaryStage<T, T>(std::move(input), Restarts::kWithInput),
        options_(std::move(options)),
        handoff_(options_.depth) {}

  void StartOnce() {
    if (!started_) {
      started_ = true;
      checkpoint_.Start(this->input());  // the base snapshot
      producer_ = std::thread([this] { Produce(); });
    }
  }

  // The producer stops: a cancel or a Restart().
  bool StoppedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancel_ || restarting_; }

  bool ReadyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !queue_.empty() || terminal_.has_value();
  }
  // The elements that count against `depth`.
  size_t QueuedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.size() + held_; }

  // Sleeps until an element, the end or a cancel; the producer signals only
  // while consumer_waiting_ is set. While the producer is fast (pulls under
  // kFastPullNanos), the consumer first watches for the next push without the
  // lock for up to kSpinNanos: the element is then usually well under a
  // microsecond away, while sleeping and being woken costs a context switch
  // each way (docs/benchmarks.md, "The figures behind the code's constants").
  void WaitForElement() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t t0 = internal::NowNanos();
    if (handoff_.ProducerFast()) {
      const uint64_t seen = pushes_.load(std::memory_order_relaxed);
      mu_.Unlock();
      Handoff::SpinWhile([&] { return pushes_.load(std::memory_order_acquire) == seen; });
      mu_.Lock();
      if (ReadyOrCancelled()) {
        totals_.consumer_wait_ns.Add(internal::NowNanos() - t0);
        return;
      }
    }
    consumer_waiting_ = true;
    consumer_wait_start_ = t0;
    consumer_urgent_ = !handoff_.ProducerFast();
    while (!ReadyOrCancelled()) consumer_cv_.Wait(&mu_);
    consumer_waiting_ = false;
    totals_.consumer_wait_ns.Add(internal::NowNanos() - t0);
  }
  // Whether a push at `now` wakes the waiting consumer.
  bool WakeConsumerLocked(int64_t now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return consumer_waiting_ && (consumer_urgent_ || queue_.size() >= handoff_.WakeBatch() ||
                                 now - consumer_wait_start_ >= Handoff::kGraceNanos);
  }

  // The consumer has returned every element it took (taken_ is empty): they
  // no longer count against `depth`, which may give a waiting producer room.
  void ReleaseHeldLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    held_ = 0;
    SignalRoomLocked();
  }
  void SignalRoomLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (producer_wait_ != ProducerWait::kNo &&
        handoff_.RoomForProducer(producer_wait_, QueuedLocked())) {
      producer_wait_ = ProducerWait::kNo;  // one signal per wait
      room_cv_.Signal();
    }
  }
  // The consumer takes up to TakeRun() queued elements per lock into taken_
  // (consumer thread only) and returns them one by one without the lock. They
  // count against `depth` (held_) until the consumer next takes the lock, so
  // the bound holds.
  // REQUIRES: taken_ is empty.
  Item TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (queue_.empty()) return *terminal_;  // sticky end or error
    handoff_.NoteTake(internal::NowNanos());
    const size_t n = std::min(queue_.size(), handoff_.TakeRun());
    for (size_t i = 0; i < n; ++i) {
      taken_.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    held_ = n - 1;  // the first goes out now
    takes_.fetch_add(1, std::memory_order_release);
    if (options_.level) {
      options_.level->store(static_cast<int64_t>(queue_.size() + held_), std::memory_order_relaxed);
    }
    SignalRoomLocked();
    return PopTaken();
  }
  Item PopTaken() {
    if (this->cancelled()) return CancelledError();
    Item item = std::move(taken_.front());
    taken_.pop_front();
    checkpoint_.Took(**item);
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**item)));
    return item;
  }

  void Produce() {
    StartPipelineThread("prefetch");
    {
      absl::MutexLock lock(&mu_);
      if (StoppedLocked()) return;
    }
    std::vector<Item> run;
    size_t want = 1;
    while (true) {
      run.clear();
      int64_t start = 0, t = 0, blocked = 0;
      const bool end = checkpoint_.PullRun(this->input(), want, run, start, t, blocked);
      absl::MutexLock lock(&mu_);
      totals_.input_wait_ns.Add(blocked);
      if (restarting_) return;  // the rest of the epoch: Restart() drops it
      handoff_.NotePulls(t - start, run.size());
      for (size_t i = 0; i + (end ? 1 : 0) < run.size(); ++i) queue_.push_back(std::move(run[i]));
      if (options_.level)
        options_.level->store(static_cast<int64_t>(queue_.size() + held_),
                              std::memory_order_relaxed);
      pushes_.fetch_add(1, std::memory_order_release);
      if (TraceEnabled()) [[unlikely]] {
        TraceCounter("prefetch queue", static_cast<double>(queue_.size() + held_));
      }
      if (end) {
        terminal_ = std::move(run.back());
        if (consumer_waiting_) consumer_cv_.Signal();
        return;
      }
      if (WakeConsumerLocked(t)) consumer_cv_.Signal();
      if (!StoppedLocked() && queue_.size() + held_ >= static_cast<size_t>(options_.depth)) {
        const int64_t t0 = internal::NowNanos();
        const ProducerWait wait = handoff_.NextWait();
        // Like the consumer (WaitForElement), watch for the consumer's next
        // take for a while before sleeping when it takes often: it then makes
        // room within microseconds, and nobody has to be woken.
        if (handoff_.ConsumerFast() && !StoppedLocked() &&
            !handoff_.RoomForProducer(wait, QueuedLocked())) {
          const uint64_t seen = takes_.load(std::memory_order_relaxed);
          mu_.Unlock();
          Handoff::SpinWhile([&] { return takes_.load(std::memory_order_acquire) == seen; });
          mu_.Lock();
        }
        while (!StoppedLocked() && !handoff_.RoomForProducer(wait, QueuedLocked())) {
          producer_wait_ = wait;
          room_cv_.Wait(&mu_);
        }
        producer_wait_ = ProducerWait::kNo;
        producer_blocked_ns_ += internal::NowNanos() - t0;
      }
      if (StoppedLocked()) return;
      // Elements to pull before pushing them in one go (internal/prefetch_handoff.h).
      want = handoff_.PullAhead(queue_.size() + held_, consumer_waiting_, consumer_urgent_);
    }
  }

  const PrefetchOptions options_;
  bool started_ = false;  // consumer thread only: the producer runs (or ran this epoch)
  mutable absl::Mutex mu_;
  absl::CondVar consumer_cv_;  // an element, the end or a cancel (while consumer_waiting_)
  absl::CondVar room_cv_;      // what producer_wait_ says, or a cancel
  internal::RingQueue<Item> queue_ ABSL_GUARDED_BY(mu_);  // values only
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);     // end of stream or the error
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool restarting_ ABSL_GUARDED_BY(mu_) = false;  // Restart() waits for the producer to stop
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  bool consumer_urgent_ ABSL_GUARDED_BY(mu_) = false;  // signal at the next push
  int64_t consumer_wait_start_ ABSL_GUARDED_BY(mu_) = 0;
  Handoff handoff_ ABSL_GUARDED_BY(mu_);  // the policy and its timings
  ProducerWait producer_wait_ ABSL_GUARDED_BY(mu_) = ProducerWait::kNo;
  // One writer each: elements, bytes and consumer_wait the consumer,
  // input_wait the producer.
  internal::StageTotals<internal::Counter> totals_;
  internal::RingQueue<Item> taken_;       // consumer thread only (TakeLocked)
  size_t held_ ABSL_GUARDED_BY(mu_) = 0;  // taken_'s size after the last take
  int64_t producer_blocked_ns_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped at every push, the end and a cancel: what a spinning consumer
  // watches (WaitForElement); and at every take, a cancel and a Restart():
  // what a spinning producer watches.
  std::atomic<uint64_t> pushes_{0};
  std::atomic<uint64_t> takes_{0};
  // Checkpoints: the producer pulls under the pull lock (SaveRefs/Reread
  // take it too), snapshots and counts: internal/prefetch_checkpoint.h.
  internal::PrefetchCheckpoint<T> checkpoint_;
  std::thread producer_;  // last: joined (in the destructor) before anything above goes
};

// PrefetchStage for the library's element types are compiled once, in
// src/prefetch.cc: programs link them instead of compiling them again. Other
// types are instantiated where they are used, as usual.
extern template class DATAECHO_EXPORT PrefetchStage<Record>;
extern template class DATAECHO_EXPORT PrefetchStage<Example>;
extern template class DATAECHO_EXPORT PrefetchStage<Batch>;

}  // namespace dataecho

#endif  // DATAECHO_PREFETCH_H_
