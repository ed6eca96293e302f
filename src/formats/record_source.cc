// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/record_source.h"

#include <deque>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

absl::Status CorruptionBudget::Skip(std::string_view what) {
  const int64_t n = skipped_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n > limit_) {
    return absl::DataLossError(
        fmt::format("too many corrupt regions skipped ({} > limit {}); last: {}", n, limit_, what));
  }
  return absl::OkStatus();
}

namespace {

// Base for both modes: stats and the stage interface.
class RecordSourceBase : public Stage<Record> {
 public:
  RecordSourceBase(std::vector<std::string> uris, RecordFileOpener open, std::string name,
                   std::shared_ptr<const CorruptionBudget> budget)
      : uris_(std::move(uris)),
        open_(std::move(open)),
        name_(std::move(name)),
        budget_(std::move(budget)) {}

  void AppendStats(std::vector<StageStats>* out) const override {
    StageStats s;
    s.name = name_;
    s.elements = elements_.Get();
    s.bytes = bytes_.Get();
    s.consumer_wait = absl::Nanoseconds(wait_nanos_.Get());
    s.extra.emplace_back("files", static_cast<double>(files_.Get()));
    s.extra.emplace_back("skipped_corrupt",
                         budget_ ? static_cast<double>(budget_->skipped()) : 0.0);
    out->push_back(std::move(s));
  }

 protected:
  // Ends a Next() that began at `start`: accounts its time, keeps the first
  // error in status_ and counts a record.
  absl::StatusOr<std::optional<Record>> Account(int64_t start,
                                                absl::StatusOr<std::optional<Record>> result) {
    wait_nanos_.Add(internal::NowNanos() - start);
    if (!result.ok() && status_.ok()) status_ = result.status();
    if (result.ok() && result->has_value()) {
      elements_.Add(1);
      bytes_.Add(static_cast<int64_t>((*result)->data.size()));
    }
    return result;
  }

  const std::vector<std::string> uris_;
  const RecordFileOpener open_;
  const std::string name_;
  const std::shared_ptr<const CorruptionBudget> budget_;
  internal::Counter elements_, bytes_, wait_nanos_;
  internal::SharedCounter files_;
  absl::Status status_;  // sticky error (consumer only)
};

// cycle_length == 1: files one after the other, on the consumer's thread.
class SequentialSource final : public RecordSourceBase {
 public:
  using RecordSourceBase::RecordSourceBase;

  absl::StatusOr<std::optional<Record>> Next() override {
    const int64_t start = internal::NowNanos();
    return Account(start, NextImpl());
  }

  void Cancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (current_) current_->Cancel();
  }

 private:
  absl::StatusOr<std::optional<Record>> NextImpl() {
    if (!status_.ok()) return status_;
    while (true) {
      if (IsCancelled()) return CancelledError();
      if (reader_ == nullptr) {
        if (next_file_ >= uris_.size()) return std::nullopt;
        auto opened = open_(uris_[next_file_], next_file_);
        ++next_file_;
        if (!opened.ok()) return opened.status();
        files_.Add(1);
        absl::MutexLock lock(&mu_);
        reader_ = std::move(*opened);
        current_ = reader_.get();
        if (cancelled_) current_->Cancel();
      }
      auto next = reader_->Next();
      if (!next.ok()) return IsCancelled() ? CancelledError() : next.status();
      if (next->has_value()) return next;
      absl::MutexLock lock(&mu_);
      current_ = nullptr;
      reader_.reset();
    }
  }

  bool IsCancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  size_t next_file_ = 0;
  std::unique_ptr<RecordFileReader> reader_;  // written under mu_, read by the consumer
  absl::Mutex mu_;
  RecordFileReader* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// cycle_length > 1: one thread per slot, each reading files slot, slot+k, ...
class InterleavedSource final : public RecordSourceBase {
 public:
  InterleavedSource(std::vector<std::string> uris, RecordFileOpener open, InterleaveOptions options,
                    std::string name, std::shared_ptr<const CorruptionBudget> budget)
      : RecordSourceBase(std::move(uris), std::move(open), std::move(name), std::move(budget)),
        options_(options),
        slots_(static_cast<size_t>(options.cycle_length)) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (i >= uris_.size()) {
        absl::MutexLock lock(&mu_);
        slots_[i].done = true;
        continue;
      }
      threads_.emplace_back([this, i] { Work(i); });
    }
  }

  ~InterleavedSource() override {
    Cancel();
    for (std::thread& t : threads_) t.join();
  }

  absl::StatusOr<std::optional<Record>> Next() override {
    const int64_t start = internal::NowNanos();
    absl::MutexLock lock(&mu_);
    return Account(start, NextLocked());
  }

  void Cancel() override {
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      for (Slot& s : slots_) {
        if (s.reader) s.reader->Cancel();
        s.room.SignalAll();
      }
    }
    consumer_cv_.SignalAll();
  }

 private:
  // Hand-offs are batched: a reading thread that filled its queue sleeps until
  // the queue is down to half, and the consumer is only signalled when it
  // waits. One wake-up per record and thread costs more CPU than reading the
  // record (a futex wake and two context switches on a busy VM).
  struct Slot {
    std::deque<absl::StatusOr<Record>> queue;
    bool done = false;                   // the thread pushed its last item
    bool worker_waiting = false;         // the thread waits for room
    absl::CondVar room;                  // signalled when the queue is down to half
    RecordFileReader* reader = nullptr;  // the file being read, for Cancel()
  };

  absl::StatusOr<std::optional<Record>> NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!status_.ok()) return status_;
    const size_t n = slots_.size();
    if (n == 0) return std::nullopt;
    while (true) {
      if (cancelled_) return CancelledError();
      bool all_done = true;
      for (const Slot& s : slots_) all_done = all_done && s.done && s.queue.empty();
      if (all_done) return std::nullopt;
      if (options_.deterministic) {
        Slot& s = slots_[turn_];
        if (!s.queue.empty()) return Pop(turn_);
        if (s.done) {  // this slot's files are finished: it drops out of the rotation
          turn_ = (turn_ + 1) % n;
          continue;
        }
      } else {
        for (size_t k = 0; k < n; ++k) {
          const size_t i = (turn_ + k) % n;
          if (!slots_[i].queue.empty()) return Pop(i);
        }
      }
      consumer_waiting_ = true;
      while (!Ready()) consumer_cv_.Wait(&mu_);
      consumer_waiting_ = false;
    }
  }

  absl::StatusOr<std::optional<Record>> Pop(size_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Slot& slot = slots_[i];
    absl::StatusOr<Record> item = std::move(slot.queue.front());
    slot.queue.pop_front();
    turn_ = (i + 1) % slots_.size();
    if (slot.worker_waiting && slot.queue.size() <= LowWater()) slot.room.Signal();
    if (!item.ok()) return item.status();
    return std::optional<Record>(std::move(*item));
  }

  size_t LowWater() const { return options_.buffered_records / 2; }

  // Something changed that the consumer waits for.
  bool Ready() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancelled_) return true;
    if (options_.deterministic) {
      const Slot& s = slots_[turn_];
      return !s.queue.empty() || s.done;
    }
    for (const Slot& s : slots_) {
      if (!s.queue.empty()) return true;
    }
    for (const Slot& s : slots_) {
      if (!s.done) return false;
    }
    return true;
  }

  void Work(size_t slot) {
    absl::Status status;
    for (size_t f = slot; f < uris_.size() && status.ok(); f += slots_.size()) {
      auto opened = open_(uris_[f], f);
      if (!opened.ok()) {
        status = opened.status();
        break;
      }
      files_.Add(1);
      std::unique_ptr<RecordFileReader> reader = std::move(*opened);
      {
        absl::MutexLock lock(&mu_);
        if (cancelled_) break;
        slots_[slot].reader = reader.get();
      }
      status = Drain(slot, *reader);
      absl::MutexLock lock(&mu_);
      slots_[slot].reader = nullptr;
      if (cancelled_) break;
    }
    Finish(slot, status);
  }

  // Moves the records of one file into the slot's queue.
  absl::Status Drain(size_t slot, RecordFileReader& reader) {
    while (true) {
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> next, reader.Next());
      if (!next.has_value()) return absl::OkStatus();
      bool wake;
      {
        absl::MutexLock lock(&mu_);
        Slot& s = slots_[slot];
        if (s.queue.size() >= options_.buffered_records) {
          s.worker_waiting = true;
          while (!cancelled_ && s.queue.size() > LowWater()) s.room.Wait(&mu_);
          s.worker_waiting = false;
        }
        if (cancelled_) return CancelledError();
        s.queue.emplace_back(*std::move(next));
        wake = consumer_waiting_;
      }
      if (wake) consumer_cv_.Signal();
    }
  }

  void Finish(size_t slot, absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (!status.ok() && !cancelled_) slots_[slot].queue.emplace_back(std::move(status));
      slots_[slot].done = true;
      slots_[slot].reader = nullptr;
    }
    consumer_cv_.Signal();
  }

  const InterleaveOptions options_;
  mutable absl::Mutex mu_;
  absl::CondVar consumer_cv_;  // an item arrived, a slot finished, or cancel
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  size_t turn_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // last: joined (in the destructor) before the rest goes
};

}  // namespace

StagePtr<Record> MakeRecordSource(std::vector<std::string> uris, RecordFileOpener open,
                                  InterleaveOptions options, std::string name,
                                  std::shared_ptr<const CorruptionBudget> budget) {
  if (options.cycle_length <= 1) {
    return std::make_unique<SequentialSource>(std::move(uris), std::move(open), std::move(name),
                                              std::move(budget));
  }
  if (options.buffered_records == 0) options.buffered_records = 1;
  return std::make_unique<InterleavedSource>(std::move(uris), std::move(open), options,
                                             std::move(name), std::move(budget));
}

}  // namespace dataecho
