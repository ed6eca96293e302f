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
// Stats (stats.h): input_wait = time the producer was blocked on an input
// that had nothing ready; consumer_wait = consumer time blocked on an empty
// queue; threads = 1; extra "producer_blocked_s" = time the producer waited on
// a full queue; "queued" = elements in the queue.
//
// Thread safety: as every stage (stage.h). The producer starts on the first
// Next() or TryNext(); destruction cancels and joins it.
#ifndef DATAECHO_PREFETCH_H_
#define DATAECHO_PREFETCH_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
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
    internal::AwaitTimed(mu_, this, &PrefetchStage::ReadyOrCancelled, totals_.consumer_wait_ns);
    return PopLocked();
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

  bool ReadyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !queue_.empty() || terminal_.has_value();
  }
  bool HasRoomOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || static_cast<int>(queue_.size()) < options_.depth;
  }

  Item PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (queue_.empty()) return *terminal_;  // sticky end or error
    Item item = std::move(queue_.front());
    queue_.pop_front();
    if (options_.level)
      options_.level->store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    ++totals_.elements;
    totals_.bytes += static_cast<int64_t>(ElementTraits<T>::ByteSize(**item));
    return item;
  }

  void Produce() {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        internal::AwaitTimed(mu_, this, &PrefetchStage::HasRoomOrCancelled, producer_blocked_ns_);
        if (cancel_) return;
      }
      Item item;
      const int64_t waited = internal::PullTimed(this->input(), &item);
      absl::MutexLock lock(&mu_);
      totals_.input_wait_ns += waited;
      if (!item.ok() || !item->has_value()) {
        terminal_ = std::move(item);
        return;
      }
      queue_.push_back(std::move(item));
      if (options_.level)
        options_.level->store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    }
  }

  const PrefetchOptions options_;
  bool started_ = false;  // consumer thread only
  mutable absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);        // values only
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);  // end of stream or the error
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);
  int64_t producer_blocked_ns_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread producer_;  // last: joined (in the destructor) before anything above goes
};

}  // namespace dataecho

#endif  // DATAECHO_PREFETCH_H_
