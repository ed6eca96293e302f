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
// The two threads wake each other per run of elements, not per element: a
// producer that finds the queue full sleeps until the consumer has taken
// depth / 8 of them (the next time: until it is half empty) and then refills
// it; a consumer that finds it empty is woken when min(32, depth / 2 + 1) are
// queued, or at the first push 50 us into its wait, or at once if the producer
// is slow (over 2 us a pull). Nobody is signalled who does not wait.
//
// Epochs (stage.h): under a Repeat, Restart() stops the producer (it finishes
// the pull in flight), drops what is queued (the rest of the epoch), restarts
// the input, and the next Next() starts the producer again.
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
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/formats/record.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
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
    absl::MutexLock lock(&mu_);
    if (!ReadyOrCancelled()) WaitForElement();
    return PopLocked();
  }

  absl::Status EnableRestart() override { return this->input().EnableRestart(); }
  absl::Status Restart(uint32_t epoch) override {
    if (started_) {
      {
        absl::MutexLock lock(&mu_);
        if (cancel_) return CancelledError();
        if (terminal_.has_value() && !terminal_->ok()) return terminal_->status();  // sticky
        restarting_ = true;  // the producer stops at its next look at the queue
        room_cv_.SignalAll();
      }
      producer_.join();
      started_ = false;  // the next Next() starts it again
      absl::MutexLock lock(&mu_);
      restarting_ = false;
      if (cancel_) return CancelledError();
      queue_.clear();  // the rest of the epoch
      terminal_.reset();
      last_wait_ = ProducerWait::kLowWater;
      if (options_.level) options_.level->store(0, std::memory_order_relaxed);
    }
    return this->input().Restart(epoch);
  }

  bool TryNext(absl::StatusOr<std::optional<T>>* out) override {
    StartOnce();
    absl::MutexLock lock(&mu_);
    if (!ReadyOrCancelled()) return false;
    *out = PopLocked();
    return true;
  }

 protected:
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
    consumer_cv_.SignalAll();
    room_cv_.SignalAll();
  }

  StageStats OwnStats() const override {
    absl::MutexLock lock(&mu_);
    return totals_.Report(
        options_.name, /*threads=*/1,
        {{"depth", options_.depth},
         {"queued", static_cast<double>(queue_.size())},
         {"producer_blocked_s", static_cast<double>(producer_blocked_ns_) * 1e-9}});
  }

 private:
  using Item = absl::StatusOr<std::optional<T>>;

  PrefetchStage(StagePtr<T> input, PrefetchOptions options)
      : UnaryStage<T, T>(std::move(input)), options_(std::move(options)) {}

  void StartOnce() {
    if (!started_) {
      started_ = true;
      producer_ = std::thread([this] { Produce(); });
    }
  }

  // The producer stops: a cancel or a Restart().
  bool StoppedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancel_ || restarting_; }

  bool ReadyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !queue_.empty() || terminal_.has_value();
  }
  // A producer that finds the queue full sleeps, alternately, until the
  // consumer has taken TopUp() elements (so that a slow consumer finds it
  // nearly full, for the stalls it is there for) and until it is down to
  // LowWater(). Either way it then refills it in one go: a wake-up per run of
  // elements instead of one per element.
  size_t LowWater() const { return static_cast<size_t>(options_.depth) / 2; }
  size_t TopUp() const { return std::max<size_t>(1, static_cast<size_t>(options_.depth) / 8); }
  // What a producer waiting on room_cv_ waits for.
  enum class ProducerWait { kNo, kTopUp, kLowWater };
  bool RoomForProducerLocked(ProducerWait wait) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (wait == ProducerWait::kTopUp)
      return queue_.size() + TopUp() <= static_cast<size_t>(options_.depth);
    return queue_.size() <= LowWater();
  }

  // A fast producer (pulls under kFastPullNanos each) wakes a waiting
  // consumer once WakeBatch() elements are queued, or the consumer has waited
  // kGraceNanos, rather than at the first element: the consumer then takes a
  // run of elements per wake-up instead of one. A slow producer wakes it at
  // once. (No timed waits: they cost a timer and extra context switches.)
  static constexpr int64_t kFastPullNanos = 2'000;
  static constexpr int64_t kGraceNanos = 50'000;
  size_t WakeBatch() const { return std::min<size_t>(32, LowWater() + 1); }

  // Sleeps until an element, the end or a cancel; the producer signals only
  // while consumer_waiting_ is set.
  void WaitForElement() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t t0 = internal::NowNanos();
    consumer_waiting_ = true;
    consumer_wait_start_ = t0;
    consumer_urgent_ = pull_ns_ >= kFastPullNanos;
    while (!ReadyOrCancelled()) consumer_cv_.Wait(&mu_);
    consumer_waiting_ = false;
    totals_.consumer_wait_ns += internal::NowNanos() - t0;
  }
  // Whether a push at `now` wakes the waiting consumer.
  bool WakeConsumerLocked(int64_t now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return consumer_waiting_ && (consumer_urgent_ || queue_.size() >= WakeBatch() ||
                                 now - consumer_wait_start_ >= kGraceNanos);
  }

  Item PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (queue_.empty()) return *terminal_;  // sticky end or error
    Item item = std::move(queue_.front());
    queue_.pop_front();
    if (options_.level)
      options_.level->store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    if (producer_wait_ != ProducerWait::kNo && RoomForProducerLocked(producer_wait_)) {
      producer_wait_ = ProducerWait::kNo;  // one signal per wait
      room_cv_.Signal();
    }
    ++totals_.elements;
    totals_.bytes += static_cast<int64_t>(ElementTraits<T>::ByteSize(**item));
    return item;
  }

  // Elements the producer pulls before it pushes them in one go (one lock,
  // one clock read each): while the consumer sleeps until WakeBatch() is
  // queued, up to that many; while the queue holds plenty, kRun; else one.
  // Never more than there is room for, and a run ends at a slow pull or after
  // kRunNanos, so that nothing is held back while the consumer could use it.
  static constexpr size_t kRun = 8;
  static constexpr int64_t kRunNanos = 20'000;
  size_t PullAheadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t queued = queue_.size();
    size_t n = 1;
    if (consumer_waiting_ && !consumer_urgent_ && WakeBatch() > queued) {
      n = WakeBatch() - queued;
    } else if (queued >= 2 * kRun) {
      n = kRun;
    }
    return std::min(n, static_cast<size_t>(options_.depth) - queued);
  }

  void Produce() {
    {
      absl::MutexLock lock(&mu_);
      if (StoppedLocked()) return;
    }
    std::vector<Item> run;
    size_t want = 1;
    while (true) {
      run.clear();
      const int64_t start = internal::NowNanos();
      int64_t t = start, blocked = 0;
      bool end = false;
      while (run.size() < want) {
        Item item;
        blocked += internal::PullTimed(this->input(), &item);
        run.push_back(std::move(item));
        const int64_t now = internal::NowNanos();
        const int64_t waited = now - t;  // the pull, blocked or not
        t = now;
        if (!run.back().ok() || !run.back()->has_value()) {
          end = true;
          break;
        }
        if (waited >= kFastPullNanos || now - start >= kRunNanos) break;
      }
      absl::MutexLock lock(&mu_);
      totals_.input_wait_ns += blocked;
      if (restarting_) return;  // the rest of the epoch: Restart() drops it
      pull_ns_ = (3 * pull_ns_ + (t - start) / static_cast<int64_t>(run.size())) / 4;
      for (size_t i = 0; i + (end ? 1 : 0) < run.size(); ++i) queue_.push_back(std::move(run[i]));
      if (options_.level)
        options_.level->store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
      if (end) {
        terminal_ = std::move(run.back());
        if (consumer_waiting_) consumer_cv_.Signal();
        return;
      }
      if (WakeConsumerLocked(t)) consumer_cv_.Signal();
      if (!StoppedLocked() && queue_.size() >= static_cast<size_t>(options_.depth)) {
        const int64_t t0 = internal::NowNanos();
        const ProducerWait wait =
            last_wait_ == ProducerWait::kTopUp ? ProducerWait::kLowWater : ProducerWait::kTopUp;
        last_wait_ = wait;
        while (!StoppedLocked() && !RoomForProducerLocked(wait)) {
          producer_wait_ = wait;
          room_cv_.Wait(&mu_);
        }
        producer_wait_ = ProducerWait::kNo;
        producer_blocked_ns_ += internal::NowNanos() - t0;
      }
      if (StoppedLocked()) return;
      want = PullAheadLocked();
    }
  }

  const PrefetchOptions options_;
  bool started_ = false;  // consumer thread only: the producer runs (or ran this epoch)
  mutable absl::Mutex mu_;
  absl::CondVar consumer_cv_;  // an element, the end or a cancel (while consumer_waiting_)
  absl::CondVar room_cv_;      // what producer_wait_ says, or a cancel
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);        // values only
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);  // end of stream or the error
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool restarting_ ABSL_GUARDED_BY(mu_) = false;  // Restart() waits for the producer to stop
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  bool consumer_urgent_ ABSL_GUARDED_BY(mu_) = false;  // signal at the next push
  int64_t consumer_wait_start_ ABSL_GUARDED_BY(mu_) = 0;
  ProducerWait producer_wait_ ABSL_GUARDED_BY(mu_) = ProducerWait::kNo;
  ProducerWait last_wait_ ABSL_GUARDED_BY(mu_) = ProducerWait::kLowWater;
  int64_t pull_ns_ ABSL_GUARDED_BY(mu_) = 0;  // the producer's pulls, averaged
  internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);
  int64_t producer_blocked_ns_ ABSL_GUARDED_BY(mu_) = 0;
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
