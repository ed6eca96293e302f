// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/record_source.h"

#include <deque>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/random.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_source_state.h"

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

// The order in which epoch `epoch` reads `n` files (indices into the list).
std::vector<size_t> FileOrder(size_t n, const InterleaveOptions& options, uint32_t epoch) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (epoch == 0 || !options.shuffle_files_each_epoch) return order;
  internal::Rng rng(internal::MixSeed(options.file_order_seed, epoch));
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);  // Fisher-Yates
  return order;
}

// Base for both modes: stats and the stage interface.
class RecordSourceBase : public Stage<Record> {
 public:
  RecordSourceBase(std::vector<std::string> uris, RecordFileOpener open, InterleaveOptions options,
                   std::string name, std::shared_ptr<const CorruptionBudget> budget)
      : uris_(std::move(uris)),
        open_(std::move(open)),
        options_(options),
        name_(std::move(name)),
        budget_(std::move(budget)),
        order_(FileOrder(uris_.size(), options_, 0)) {}

  void AppendStats(std::vector<StageStats>* out) const override {
    StageStats s;
    s.name = name_;
    s.elements = elements_.Get();
    s.bytes = bytes_.Get();
    s.threads = options_.cycle_length > 1 ? options_.cycle_length : 0;
    if (s.threads > 0) s.consumer_wait = absl::Nanoseconds(wait_nanos_.Get());
    s.extra.emplace_back("files", static_cast<double>(files_.Get()));
    s.extra.emplace_back("skipped_corrupt",
                         budget_ ? static_cast<double>(budget_->skipped()) : 0.0);
    if (s.threads == 0) {
      s.extra.emplace_back("busy_s", static_cast<double>(wait_nanos_.Get()) * 1e-9);
    }
    out->push_back(std::move(s));
  }

  absl::Status EnableRestart() override { return status_; }

  // Records are referenced by (source_index, offset, epoch) and read again
  // from their files (record_source_state.h).
  absl::Status SaveRefs(std::span<const Record* const> items, StateWriter& w) override {
    internal::SaveRecordRefs(items, w);
    return absl::OkStatus();
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<Record>* out) override {
    return internal::RereadRecords(r, n, uris_, open_, out);
  }

 protected:
  uint64_t Hash() const {
    OptionsHash h;
    h.Add(static_cast<uint64_t>(uris_.size())).Add(options_.file_order_seed);
    h.Add(static_cast<uint64_t>(options_.shuffle_files_each_epoch));
    for (const std::string& uri : uris_) h.Add(std::string_view(uri));
    return h.value();
  }

  // Ends a Next() that began at `start`: accounts its time, keeps the first
  // error in status_ and counts a record (stamped with the epoch).
  absl::StatusOr<std::optional<Record>> Account(int64_t start,
                                                absl::StatusOr<std::optional<Record>> result) {
    wait_nanos_.Add(internal::NowNanos() - start);
    if (!result.ok() && status_.ok()) status_ = result.status();
    if (result.ok() && result->has_value()) {
      (*result)->epoch = epoch_;
      elements_.Add(1);
      bytes_.Add(static_cast<int64_t>((*result)->data.size()));
    }
    return result;
  }

  // The files of `epoch`, in their order. REQUIRES: no reading thread runs.
  void SetEpoch(uint32_t epoch) {
    epoch_ = epoch;
    order_ = FileOrder(uris_.size(), options_, epoch);
  }

  // Opens the i-th file of the epoch's order.
  absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenNth(size_t i) const {
    return open_(uris_[order_[i]], order_[i]);
  }

  const std::vector<std::string> uris_;
  const RecordFileOpener open_;
  const InterleaveOptions options_;
  const std::string name_;
  const std::shared_ptr<const CorruptionBudget> budget_;
  internal::Counter elements_, bytes_, wait_nanos_;
  internal::SharedCounter files_;
  absl::Status status_;  // sticky error (consumer only)
  uint32_t epoch_ = 0;   // consumer only
  // Written by the consumer only while no reading thread runs.
  std::vector<size_t> order_;
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

  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(status_);
    std::unique_ptr<RecordFileReader> old;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return CancelledError();
      current_ = nullptr;
      old = std::move(reader_);
    }
    next_file_ = 0;
    in_file_ = 0;
    SetEpoch(epoch);
    return absl::OkStatus();
  }

  // State: the epoch, the files started and the records taken from the open
  // one, which a restore reopens and reads up to there.
  absl::Status SaveState(StateWriter& w) override {
    if (!status_.ok()) {
      return absl::FailedPreconditionError(
          fmt::format("{} cannot save its state after an error: {}", name_, status_.ToString()));
    }
    w.BeginStage(name_, Hash());
    w.U64(epoch_);
    w.U64(next_file_);
    w.Bool(reader_ != nullptr);
    w.U64(in_file_);
    return absl::OkStatus();
  }
  absl::Status RestoreState(StateReader& r) override {
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(name_));
    const uint64_t epoch = r.U64();
    const uint64_t next_file = r.U64();
    const bool open = r.Bool();
    const uint64_t in_file = r.U64();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (epoch > UINT32_MAX || next_file > uris_.size() || (open && next_file == 0)) {
      return absl::DataLossError(
          fmt::format("pipeline state: {} at file {} of {}", name_, next_file, uris_.size()));
    }
    DATAECHO_RETURN_IF_ERROR(Restart(static_cast<uint32_t>(epoch)));
    next_file_ = next_file;
    if (!open) return absl::OkStatus();
    const size_t i = next_file - 1;
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<RecordFileReader> reader, OpenNth(i));
    files_.Add(1);
    DATAECHO_RETURN_IF_ERROR(internal::SkipRecords(*reader, in_file, uris_[order_[i]]));
    in_file_ = in_file;
    absl::MutexLock lock(&mu_);
    reader_ = std::move(reader);
    current_ = reader_.get();
    if (cancelled_) current_->Cancel();
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::optional<Record>> NextImpl() {
    if (!status_.ok()) return status_;
    while (true) {
      if (IsCancelled()) return CancelledError();
      if (reader_ == nullptr) {
        if (next_file_ >= uris_.size()) return std::nullopt;
        auto opened = OpenNth(next_file_);
        ++next_file_;
        if (!opened.ok()) return opened.status();
        files_.Add(1);
        in_file_ = 0;
        absl::MutexLock lock(&mu_);
        reader_ = std::move(*opened);
        current_ = reader_.get();
        if (cancelled_) current_->Cancel();
      }
      auto next = reader_->Next();
      if (!next.ok()) return IsCancelled() ? CancelledError() : next.status();
      if (next->has_value()) {
        ++in_file_;
        return next;
      }
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
  uint64_t in_file_ = 0;                      // records taken from the open file
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
      : RecordSourceBase(std::move(uris), std::move(open), options, std::move(name),
                         std::move(budget)),
        slots_(static_cast<size_t>(options.cycle_length)) {
    StartThreads();
  }

  ~InterleavedSource() override {
    Cancel();
    for (std::thread& t : threads_) t.join();
  }

  // Stops the reading threads (wherever they are), then starts them over on
  // the files of `epoch`.
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(status_);
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return CancelledError();
      restarting_ = true;
      for (Slot& s : slots_) {
        if (s.reader) s.reader->Cancel();
        s.room.SignalAll();
      }
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    SetEpoch(epoch);
    {
      absl::MutexLock lock(&mu_);
      restarting_ = false;
      for (Slot& s : slots_) {
        s.queue.clear();
        s.done = false;
        s.worker_waiting = false;
        s.reader = nullptr;
      }
      turn_ = 0;
    }
    StartThreads();
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<Record>> Next() override {
    const int64_t start = internal::NowNanos();
    absl::MutexLock lock(&mu_);
    return Account(start, NextLocked());
  }

  absl::Status SaveState(StateWriter& /*w*/) override {
    return absl::FailedPreconditionError(
        fmt::format("{} with cycle_length {} > 1 cannot save its state yet (use cycle_length 1)",
                    name_, options_.cycle_length));
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

  void StartThreads() {
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (i >= uris_.size()) {
        absl::MutexLock lock(&mu_);
        slots_[i].done = true;
        continue;
      }
      threads_.emplace_back([this, i] { Work(i); });
    }
  }

  // The reading threads must stop: Cancel(), or a Restart().
  bool Halted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancelled_ || restarting_; }

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
      auto opened = OpenNth(f);
      if (!opened.ok()) {
        status = opened.status();
        break;
      }
      files_.Add(1);
      std::unique_ptr<RecordFileReader> reader = std::move(*opened);
      {
        absl::MutexLock lock(&mu_);
        if (Halted()) break;
        slots_[slot].reader = reader.get();
      }
      status = Drain(slot, *reader);
      absl::MutexLock lock(&mu_);
      slots_[slot].reader = nullptr;
      if (Halted()) break;
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
          while (!Halted() && s.queue.size() > LowWater()) s.room.Wait(&mu_);
          s.worker_waiting = false;
        }
        if (Halted()) return CancelledError();
        s.queue.emplace_back(*std::move(next));
        wake = consumer_waiting_;
      }
      if (wake) consumer_cv_.Signal();
    }
  }

  void Finish(size_t slot, absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (!status.ok() && !Halted()) slots_[slot].queue.emplace_back(std::move(status));
      slots_[slot].done = true;
      slots_[slot].reader = nullptr;
    }
    consumer_cv_.Signal();
  }

  mutable absl::Mutex mu_;
  absl::CondVar consumer_cv_;  // an item arrived, a slot finished, or cancel
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  size_t turn_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool restarting_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // last: joined (in the destructor) before the rest goes
};

}  // namespace

StagePtr<Record> MakeRecordSource(std::vector<std::string> uris, RecordFileOpener open,
                                  InterleaveOptions options, std::string name,
                                  std::shared_ptr<const CorruptionBudget> budget) {
  if (options.cycle_length <= 1) {
    return std::make_unique<SequentialSource>(std::move(uris), std::move(open), options,
                                              std::move(name), std::move(budget));
  }
  if (options.buffered_records == 0) options.buffered_records = 1;
  return std::make_unique<InterleavedSource>(std::move(uris), std::move(open), options,
                                             std::move(name), std::move(budget));
}

}  // namespace dataecho
