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
// The two threads meet per run of elements, not per element, as every stage
// that runs ahead (internal/run_ahead.h has the one policy): the consumer
// takes up to depth / 4 queued elements at a time (they still count against
// `depth`); a producer that finds a queue of 16 or more full waits until
// there is room for depth / 8 of them (the next time: half the queue) and
// then refills it (a shorter queue is kept full);
// a consumer that finds it empty is woken when min(32, depth / 2 + 1) are
// queued or after holding out for 1.5 times what the producer takes to make
// them (at once when that is over 1 ms). Before sleeping, a side whose peer is
// fast watches for it for a while instead: being put to sleep and woken costs
// more than that on a virtual machine.
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
// restore pulls again from the input and drops (internal/snapshotted_input.h).
// SaveRefs()/Reread() reach the input under the lock the producer holds while
// pulling a run (the consumer waits for at most one run, 20 us or one pull).
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
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/internal/run_ahead_queue.h"
#include "dataecho/internal/snapshotted_input.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename T>
class PrefetchStage final : public UnaryStage<T, T> {
 public:
  // (Defined below the class, not inline, as MapStage::Make.)
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, PrefetchOptions options = {});

  ~PrefetchStage() override {
    this->Cancel();
    if (producer_.joinable()) producer_.join();
  }

  absl::StatusOr<std::optional<T>> Next() override {
    StartOnce();
    Item item = queue_.Next();
    Count(item);
    return item;
  }
  bool TryNext(absl::StatusOr<std::optional<T>>* out) override {
    StartOnce();
    if (!queue_.TryTake(/*deadline=*/0, out)) return false;
    Count(*out);
    return true;
  }

  // References are the input's: taken under the pull lock (the producer may be pulling).
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    internal::MutexLock lock(&input_.pull_mu());
    return this->input().SaveRefs(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    internal::MutexLock lock(&input_.pull_mu());
    return this->input().Reread(r, n, out);
  }

 protected:
  void OnCancel() override { queue_.core().Cancel(); }

  // Restarts with its input (stage.h): a running producer stops first, and
  // what it read ahead (the rest of the epoch) is dropped.
  absl::Status BeforeRestart() override {
    if (!started_) return absl::OkStatus();
    internal::RunAhead& core = queue_.core();
    {
      internal::MutexLock lock(&core.mu());
      if (core.CancelledLocked()) return CancelledError();
      const auto& terminal = queue_.terminal();
      if (terminal.has_value() && !terminal->ok()) return terminal->status();  // sticky
      core.BeginStop();  // the producer stops at its next look at the queue
    }
    producer_.join();
    started_ = false;  // the next Next() starts it again
    internal::MutexLock lock(&core.mu());
    if (core.CancelledLocked()) return CancelledError();
    core.EndStop();
    queue_.Clear();  // the rest of the epoch
    input_.Reset();
    return absl::OkStatus();
  }

  std::string StateName() const override { return options_.name; }
  // The input's state: the newest snapshot the consumer has passed (or, with
  // no producer running, the input's own), and the elements taken since.
  absl::Status SaveInput(StateWriter& w) override {
    {
      internal::MutexLock lock(&queue_.core().mu());
      if (queue_.TerminalErrorLocked()) {
        return CannotSaveAfterError(options_.name, queue_.terminal()->status());
      }
    }
    return input_.SaveInput(started_, this->input(), w);
  }
  absl::Status SaveOwn(StateWriter& w) override { return input_.SaveOwn(w); }
  absl::Status RestoreOwn(StateReader& r) override {
    return input_.RestoreOwn(r, this->input(), options_.name,
                             [](const T& v) { return internal::ContentFingerprint(v); });
  }

  StageStats OwnStats() const override {
    internal::RunAhead& core = queue_.core();
    internal::MutexLock lock(&core.mu());
    StageStats s = totals_.Report(
        options_.name, /*threads=*/1,
        {{"depth", options_.depth},
         {"queued", static_cast<double>(queue_.QueuedLocked())},
         {"producer_blocked_s", static_cast<double>(core.producer_blocked_ns()) * 1e-9}});
    s.consumer_wait = absl::Nanoseconds(core.consumer_wait_ns());
    return s;
  }

 private:
  using Item = absl::StatusOr<std::optional<T>>;

  PrefetchStage(StagePtr<T> input, PrefetchOptions options)
      : UnaryStage<T, T>(std::move(input), Restarts::kWithInput),
        options_(std::move(options)),
        queue_(options_.depth, options_.level, "prefetch queue") {}

  void StartOnce() {
    if (!started_) {
      started_ = true;
      input_.Start(this->input());  // the base snapshot
      producer_ = std::thread([this] { Produce(); });
    }
  }

  // An element returned: counted, and its fingerprint folded for checkpoints.
  void Count(const Item& item) {
    if (item.ok() && item->has_value()) {
      input_.Took(internal::ContentFingerprint(**item));
      totals_.elements.Add(1);
      totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**item)));
    }
  }

  void Produce() {
    StartPipelineThread("prefetch");
    // A run ends early at a slow pull or after kRunNanos: nothing is held
    // back while the consumer could use it.
    queue_.Produce([this](size_t want, std::vector<T>& values, std::optional<Item>& terminal) {
      const auto times = input_.PullRun(this->input(),
                                        {.want = want,
                                         .max_ns = internal::RunAhead::kRunNanos,
                                         .slow_pull_ns = internal::RunAhead::kSlowPullNanos},
                                        values, terminal, [](auto&, auto&, auto&) {});
      totals_.input_wait_ns.Add(times.blocked);
      return times.ns;
    });
  }

  const PrefetchOptions options_;
  bool started_ = false;  // consumer thread only: the producer runs (or ran this epoch)
  // One writer each: elements and bytes the consumer, input_wait the producer.
  internal::StageTotals<internal::Counter> totals_;
  // The pull lock, the snapshots and what the consumer took (checkpoints).
  internal::SnapshottedInput<T> input_;
  mutable internal::RunAheadQueue<T> queue_;  // the core: lock, counts, waits
  std::thread producer_;  // last: joined (in the destructor) before anything above goes
};

template <typename T>
absl::StatusOr<StagePtr<T>> PrefetchStage<T>::Make(StagePtr<T> input, PrefetchOptions options) {
  DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
  DATAECHO_RETURN_IF_ERROR(options.Validate());
  return StagePtr<T>(new PrefetchStage(std::move(input), std::move(options)));
}

// PrefetchStage for the library's element types are compiled once, in
// src/prefetch.cc: programs link them instead of compiling them again. Other
// types are instantiated where they are used, as usual.
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(PrefetchStage);

}  // namespace dataecho

#endif  // DATAECHO_PREFETCH_H_
