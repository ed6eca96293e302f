// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/record_source.h"

#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/random.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "formats/record_source_base.h"
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

namespace internal {

// The order in which epoch `epoch` reads `n` files (indices into the list).
std::vector<size_t> FileOrder(size_t n, const InterleaveOptions& options, uint32_t epoch) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (epoch == 0 || !options.shuffle_files_each_epoch) return order;
  internal::Rng rng(internal::MixSeed(options.file_order_seed, epoch));
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);  // Fisher-Yates
  return order;
}

}  // namespace internal

namespace {

using internal::RecordSourceBase;

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

  ~SequentialSource() override {
    if (pending_ != nullptr) (void)pending_->Wait();  // its thread uses this source
  }

  absl::Status Restart(uint32_t epoch) override {
    (void)Settle();
    DATAECHO_RETURN_IF_ERROR(status_);
    std::unique_ptr<RecordFileReader> old;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return CancelledError();
      current_ = nullptr;
      old = std::move(reader_);
    }
    resume_at_.reset();
    next_file_ = 0;
    in_file_ = 0;
    last_ = {};
    SetEpoch(epoch);
    return absl::OkStatus();
  }

  // State: the epoch, the files started and the records taken from the open
  // one; from version 3 also that file's fingerprint and the offset of the
  // last record taken. A restore reopens the file at that record (a ranged
  // read; a compressed file, or a format without ranged reads, is read from
  // its start up to there), checking that the record still has the payload
  // CRC-32C saved and the file its fingerprint (a file rewritten, even with
  // records of the same lengths, is DATA_LOSS, not other data).
  absl::Status SaveState(StateWriter& w) override {
    (void)Settle();
    if (!status_.ok()) return CannotSaveAfterError(name_, status_);
    NoteOpenFile();
    w.BeginStage(name_, Hash());
    w.U64(epoch_);
    w.U64(next_file_);
    const bool open = reader_ != nullptr || resume_at_.has_value();
    w.Bool(open);
    w.U64(in_file_);
    if (!open) return absl::OkStatus();
    if (in_file_ > 0) w.Fixed32(last_.PayloadCrc32c());
    auto fp = fingerprints_.find(order_[next_file_ - 1]);
    internal::SaveFingerprint(fp == fingerprints_.end()
                                  ? std::nullopt
                                  : std::optional<internal::FileFingerprint>(fp->second),
                              w);
    if (in_file_ > 0) w.U64(last_.offset);
    return absl::OkStatus();
  }
  absl::Status RestoreState(StateReader& r) override {
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(name_));
    const uint64_t epoch = r.U64();
    const uint64_t next_file = r.U64();
    const bool open = r.Bool();
    const uint64_t in_file = r.U64();
    auto reopen = std::make_shared<Reopen>();
    if (open && in_file > 0 && r.version() >= 2) reopen->last_crc = r.Fixed32();
    if (open && r.version() >= 3) {
      reopen->fingerprint = internal::RestoreFingerprint(r);
      if (in_file > 0) reopen->last_offset = r.U64();
    }
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (epoch > UINT32_MAX || next_file > uris_.size() || (open && next_file == 0) ||
        in_file > internal::IndexInFile(~uint64_t{0})) {
      return absl::DataLossError(
          fmt::format("pipeline state: {} at file {} of {}", name_, next_file, uris_.size()));
    }
    DATAECHO_RETURN_IF_ERROR(Restart(static_cast<uint32_t>(epoch)));
    next_file_ = next_file;
    if (!open) return absl::OkStatus();
    // The file is reopened on a thread of its own while the stages after
    // this one restore (their buffered records are read again meanwhile);
    // the restore's end (StateReader::Finish), or this source's next use,
    // waits for it.
    reopen->file = order_[next_file - 1];
    reopen->in_file = in_file;
    pending_ = reopen;
    reopen->thread = std::thread([this, job = reopen.get()] { job->status = DoReopen(*job); });
    r.Defer([reopen] { return reopen->Wait(); });
    return absl::OkStatus();
  }

  void NoteOpenFile() override {
    (void)Settle();
    if (reader_ != nullptr) NoteFingerprint(order_[next_file_ - 1], *reader_);
  }

 private:
  // A restore's reopening of the file its position is in (RestoreState):
  // what it needs, and what it found, written by its thread before Wait()
  // returns.
  struct Reopen {
    uint64_t file = 0;                                     // position in uris_
    uint64_t in_file = 0;                                  // records taken from it
    std::optional<uint32_t> last_crc;                      // version 2 on
    std::optional<internal::FileFingerprint> fingerprint;  // version 3 on
    std::optional<uint64_t> last_offset;                   // version 3 on
    std::thread thread;
    absl::Status status;
    std::unique_ptr<RecordFileReader> reader;  // (none when resume_at is set)
    Record last;
    std::optional<uint64_t> resume_at;  // the offset of `last`, read from there at Resume()

    ~Reopen() { (void)Wait(); }
    absl::Status Wait() {
      std::lock_guard<std::mutex> lock(join_mu);
      if (thread.joinable()) thread.join();
      return status;
    }
    std::mutex join_mu;
  };

  // On the reopen's thread: the reader of `reopen.file` after the record
  // the consumer took last, that record checked (its payload CRC-32C, its
  // offset) and the file's fingerprint.
  absl::Status DoReopen(Reopen& reopen) {
    const std::string& uri = uris_[reopen.file];
    // The reader is kept in `reopen` (Cancel() may reach it) until Settle() takes it or drops it.
    if (reopen.last_offset.has_value() && open_range_ && open_range_.ranged(uri)) {
      // The last record taken, read where it was and checked with a small
      // read; the reading goes on from there at the next Next() (Resume()),
      // with the source's read-ahead, as a new source opens its first file at
      // its first Next(): the restore does not wait for (nor share its
      // bandwidth with) a read-ahead it does not need.
      DATAECHO_ASSIGN_OR_RETURN(
          reopen.reader, open_range_.open(uri, reopen.file, *reopen.last_offset, reopen.in_file - 1,
                                          kCheckReadAhead));
      Register(reopen.reader.get());
      DATAECHO_RETURN_IF_ERROR(internal::SkipRecords(*reopen.reader, 1, uri, reopen.last_crc,
                                                     &reopen.last, reopen.fingerprint));
      DATAECHO_RETURN_IF_ERROR(internal::CheckFingerprint(*reopen.reader, reopen.fingerprint, uri));
      DATAECHO_RETURN_IF_ERROR(CheckLast(reopen.last, reopen.in_file, *reopen.last_offset, uri));
      {
        absl::MutexLock lock(&mu_);
        current_ = nullptr;
      }
      reopen.reader.reset();
      reopen.resume_at = *reopen.last_offset;
      return absl::OkStatus();
    }
    // Read from the start up to there (a compressed file, a state before version 3); this
    // reader goes on.
    DATAECHO_ASSIGN_OR_RETURN(reopen.reader, open_(uri, reopen.file));
    Register(reopen.reader.get());
    DATAECHO_RETURN_IF_ERROR(internal::SkipRecords(
        *reopen.reader, reopen.in_file, uri, reopen.last_crc, &reopen.last, reopen.fingerprint));
    return internal::CheckFingerprint(*reopen.reader, reopen.fingerprint, uri);
  }

  // The reopen's reader is cancelled by Cancel() too.
  void Register(RecordFileReader* reader) {
    absl::MutexLock lock(&mu_);
    current_ = reader;
    if (cancelled_) reader->Cancel();
  }

  // Waits for a restore's reopening of the file, if one is pending, and
  // takes its reader. Its error stays (status_).
  absl::Status Settle() {
    if (pending_ == nullptr) return status_;
    std::shared_ptr<Reopen> reopen = std::move(pending_);
    pending_ = nullptr;
    absl::Status s = reopen->Wait();
    if (!s.ok()) {
      absl::MutexLock lock(&mu_);
      current_ = nullptr;
    }
    if (!s.ok()) {
      if (status_.ok()) status_ = s;
      return s;
    }
    if (reopen->fingerprint.has_value()) fingerprints_.emplace(reopen->file, *reopen->fingerprint);
    files_.Add(1);
    in_file_ = reopen->in_file;
    last_ = std::move(reopen->last);
    resume_at_ = reopen->resume_at;
    if (resume_at_.has_value()) return absl::OkStatus();
    absl::MutexLock lock(&mu_);
    reader_ = std::move(reopen->reader);
    current_ = reader_.get();
    if (cancelled_) current_->Cancel();
    return absl::OkStatus();
  }

  // DATA_LOSS unless `last` is record in_file - 1 of `uri`, at `offset`.
  static absl::Status CheckLast(const Record& last, uint64_t in_file, uint64_t offset,
                                const std::string& uri) {
    if (last.offset != offset || internal::IndexInFile(last.source_index) != in_file - 1) {
      return absl::DataLossError(fmt::format(
          "pipeline state: record {} of {} not found again at offset {} (the file changed?)",
          in_file - 1, RedactUri(uri), offset));
    }
    return absl::OkStatus();
  }

  // After a restore, the first Next() opens the file at the last record
  // taken (checked again: its offset, index and payload CRC-32C) and reads
  // on from there.
  absl::Status Resume() {
    const size_t file = order_[next_file_ - 1];
    const std::string& uri = uris_[file];
    const uint64_t offset = *resume_at_;
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<RecordFileReader> reader,
                              open_range_.open(uri, file, offset, in_file_ - 1, /*read_ahead=*/0));
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return CancelledError();
      current_ = reader.get();
    }
    Record last;
    absl::Status s = internal::SkipRecords(*reader, 1, uri, last_.PayloadCrc32c(), &last);
    if (s.ok()) s = CheckLast(last, in_file_, offset, uri);
    absl::MutexLock lock(&mu_);
    if (!s.ok()) {
      current_ = nullptr;
      return s;
    }
    resume_at_.reset();
    reader_ = std::move(reader);
    if (cancelled_) current_->Cancel();
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<Record>> NextImpl() {
    (void)Settle();
    if (!status_.ok()) return status_;
    while (true) {
      if (IsCancelled()) return CancelledError();
      if (reader_ == nullptr && resume_at_.has_value()) {
        DATAECHO_RETURN_IF_ERROR(Resume());
      }
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
        last_.data = (*next)->data;  // a handle: its CRC is computed only if a state is saved
        last_.crc32c = (*next)->crc32c;
        last_.offset = (*next)->offset;
        return next;
      }
      NoteOpenFile();  // read to its end: the fingerprint costs nothing more
      absl::MutexLock lock(&mu_);
      current_ = nullptr;
      reader_.reset();
    }
  }

  // The read-ahead of the read that checks a restored position's last
  // record (one request over HTTP).
  static constexpr size_t kCheckReadAhead = size_t{64} << 10;

  bool IsCancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  size_t next_file_ = 0;
  uint64_t in_file_ = 0;                      // records taken from the open file
  Record last_;                               // the payload (and CRC, if known) of the last of them
  std::shared_ptr<Reopen> pending_;           // a restore's reopening, until Settle()
  std::optional<uint64_t> resume_at_;         // after a restore: where Resume() reads on
  std::unique_ptr<RecordFileReader> reader_;  // written under mu_, read by the consumer
  absl::Mutex mu_;
  RecordFileReader* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

namespace internal {

StagePtr<Record> MakeRangedRecordSource(std::vector<std::string> uris, RecordFileOpener open,
                                        RecordRangeOpener open_range, InterleaveOptions options,
                                        std::string name,
                                        std::shared_ptr<const CorruptionBudget> budget,
                                        std::optional<uint64_t> list_hash,
                                        std::shared_ptr<const RereadFiles> reread_files) {
  if (options.cycle_length <= 1) {
    // (The sequential source's state leaves the list's hash out: its states
    // from before it was added still restore.)
    return std::make_unique<SequentialSource>(
        std::move(uris), std::move(open), options, std::move(name), std::move(budget),
        std::move(open_range), std::nullopt, std::move(reread_files));
  }
  if (options.buffered_records == 0) options.buffered_records = 1;
  return internal::MakeInterleavedSource(std::move(uris), std::move(open), options, std::move(name),
                                         std::move(budget), std::move(open_range), list_hash,
                                         std::move(reread_files));
}

}  // namespace internal

StagePtr<Record> MakeRecordSource(std::vector<std::string> uris, RecordFileOpener open,
                                  InterleaveOptions options, std::string name,
                                  std::shared_ptr<const CorruptionBudget> budget) {
  return internal::MakeRangedRecordSource(std::move(uris), std::move(open), {}, options,
                                          std::move(name), std::move(budget));
}

}  // namespace dataecho
