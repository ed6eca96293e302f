// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/record_source_interleaved.h: the record source with cycle_length >
// 1, k reading threads (formats/record_source.h): the reading in
// record_source_interleaved.cc, the checkpoints in
// record_source_interleaved_state.cc. Not part of the public API.
#ifndef DATAECHO_SRC_FORMATS_RECORD_SOURCE_INTERLEAVED_H_
#define DATAECHO_SRC_FORMATS_RECORD_SOURCE_INTERLEAVED_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage_kit.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_source_base.h"
#include "formats/record_source_state.h"

namespace dataecho::internal {

// cycle_length > 1: one thread per slot, each reading files slot, slot+k, ...
class InterleavedSource final : public RecordSourceBase {
 public:
  InterleavedSource(std::vector<std::string> uris, RecordFileOpener open, InterleaveOptions options,
                    std::string name, std::shared_ptr<const CorruptionBudget> budget,
                    RecordRangeOpener open_range, std::optional<uint64_t> list_hash,
                    std::shared_ptr<const RereadFiles> reread_files)
      : RecordSourceBase(std::move(uris), std::move(open), options, std::move(name),
                         std::move(budget), std::move(open_range), list_hash,
                         std::move(reread_files)),
        // A slot past the last file would only be a finished one: there are
        // never more than the files (so cycle_length = INT_MAX costs nothing).
        slots_(std::min(static_cast<size_t>(options.cycle_length),
                        std::max<size_t>(uris_.size(), 2))) {
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
    DATAECHO_RETURN_IF_ERROR(StopThreads());
    SetEpoch(epoch);
    ResetSlots();
    StartThreads();
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<Record>> Next() override {
    const int64_t start = internal::NowNanos();
    absl::MutexLock lock(&mu_);
    return Account(start, NextLocked());
  }

  // State (record_source_interleaved_state.cc): the epoch, the turn, and per
  // slot the position behind the records the consumer took: the file (its
  // place in the epoch's order, which the reading thread queued beside each
  // record: a range source's records name their dataset file, not their
  // range) and the records taken of it, with the last one's offset and
  // CRC-32C. The read-ahead in the queues is not saved: a restore starts each
  // thread there and reads it again.
  absl::Status SaveState(StateWriter& w) override;
  absl::Status RestoreState(StateReader& r) override;
  // References, with the fingerprints of the files the threads finished.
  absl::Status SaveRefs(std::span<const Record* const> items, StateWriter& w) override {
    absl::MutexLock lock(&mu_);
    return SaveRefsByPosition(items, w);
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
  // record (a futex wake and two context switches on a busy VM). A queued
  // record (or the error that ends the slot's files) goes with the place in
  // the epoch's order of the file it was read from (checkpoints: Took()).
  struct Queued {
    absl::StatusOr<Record> item;
    int64_t file = -1;
  };
  struct Slot {
    std::deque<Queued> queue;
    bool done = false;                   // the thread pushed its last item
    bool worker_waiting = false;         // the thread waits for room
    absl::CondVar room;                  // signalled when the queue is down to half
    RecordFileReader* reader = nullptr;  // the file being read, for Cancel()
    // What the consumer took (checkpoints): the place in the epoch's order of
    // the file of its last record (-1: none yet), the records taken of that
    // file, and the last one (payload handle, offset).
    int64_t taken_file = -1;
    uint64_t taken = 0;
    Record last;
    // Where the thread starts after a restore: file place (-1: the slot's
    // first file) and the records to skip of it, the last of which has
    // `resume_crc` (version 2 on) at `resume_offset` (version 3 on).
    int64_t resume_file = -1;
    uint64_t resume_taken = 0;
    std::optional<uint32_t> resume_crc;
    std::optional<uint64_t> resume_offset;
  };

  absl::Status StopThreads();
  void ResetSlots();
  uint64_t StateHash() const;
  // Notes the record the consumer takes from slot `i`, read from the file at
  // place `file` of the epoch's order.
  void Took(size_t i, int64_t file, const Record& rec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Opens the file where slot `slot` resumes, positioned after its records taken.
  absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenResumed(size_t slot, size_t f,
                                                                uint64_t taken,
                                                                std::optional<uint32_t> crc,
                                                                std::optional<uint64_t> offset);

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
    Queued queued = std::move(slot.queue.front());
    slot.queue.pop_front();
    turn_ = (i + 1) % slots_.size();
    if (slot.worker_waiting && slot.queue.size() <= LowWater()) slot.room.Signal();
    if (!queued.item.ok()) return queued.item.status();
    Took(i, queued.file, *queued.item);
    return std::optional<Record>(std::move(*queued.item));
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
    StartPipelineThread("record reader");
    absl::Status status;
    int64_t resume_file;
    uint64_t resume_taken;
    std::optional<uint32_t> resume_crc;
    std::optional<uint64_t> resume_offset;
    {
      absl::MutexLock lock(&mu_);
      const Slot& s = slots_[slot];
      resume_file = s.resume_file;
      resume_taken = s.resume_taken;
      resume_crc = s.resume_crc;
      resume_offset = s.resume_offset;
    }
    const size_t first = resume_file >= 0 ? static_cast<size_t>(resume_file) : slot;
    for (size_t f = first; f < uris_.size() && status.ok(); f += slots_.size()) {
      auto opened = f == first && resume_file >= 0
                        ? OpenResumed(slot, f, resume_taken, resume_crc, resume_offset)
                        : OpenNth(f);
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
      status = Drain(slot, static_cast<int64_t>(f), *reader);
      if (status.ok()) {  // read to its end: its fingerprint costs nothing more
        std::optional<FileFingerprint> fp = KnownFingerprintOf(*reader);
        absl::MutexLock lock(&mu_);
        if (fp.has_value()) fingerprints_.emplace(order_[f], *fp);
      }
      absl::MutexLock lock(&mu_);
      slots_[slot].reader = nullptr;
      if (Halted()) break;
    }
    Finish(slot, status);
  }

  // Moves the records of one file, at place `file` of the epoch's order, into
  // the slot's queue.
  absl::Status Drain(size_t slot, int64_t file, RecordFileReader& reader) {
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
        s.queue.push_back({*std::move(next), file});
        wake = consumer_waiting_;
      }
      if (wake) consumer_cv_.Signal();
    }
  }

  void Finish(size_t slot, absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (!status.ok() && !Halted()) slots_[slot].queue.push_back({std::move(status)});
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

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_RECORD_SOURCE_INTERLEAVED_H_
