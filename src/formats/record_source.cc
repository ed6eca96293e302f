// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/record_source.h"

#include <optional>
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
    if (!status_.ok()) {
      return absl::FailedPreconditionError(
          fmt::format("{} cannot save its state after an error: {}", name_, status_.ToString()));
    }
    NoteOpenFile();
    w.BeginStage(name_, Hash());
    w.U64(epoch_);
    w.U64(next_file_);
    w.Bool(reader_ != nullptr);
    w.U64(in_file_);
    if (reader_ == nullptr) return absl::OkStatus();
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
    std::optional<uint32_t> last_crc;  // version 1 states have none
    if (open && in_file > 0 && r.version() >= 2) last_crc = r.Fixed32();
    std::optional<internal::FileFingerprint> fingerprint;  // version 3 on
    std::optional<uint64_t> last_offset;                   // version 3 on
    if (open && r.version() >= 3) {
      fingerprint = internal::RestoreFingerprint(r);
      if (in_file > 0) last_offset = r.U64();
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
    const size_t i = next_file - 1;
    const std::string& uri = uris_[order_[i]];
    std::unique_ptr<RecordFileReader> reader;
    Record last;
    if (last_offset.has_value() && open_range_ && open_range_.ranged(uri)) {
      // The last record taken, read where it was; the reader goes on from there.
      DATAECHO_ASSIGN_OR_RETURN(reader, open_range_.open(uri, order_[i], *last_offset, in_file - 1,
                                                         /*read_ahead=*/0));
      DATAECHO_RETURN_IF_ERROR(internal::SkipRecords(*reader, 1, uri, last_crc, &last));
      if (last.offset != *last_offset || internal::IndexInFile(last.source_index) != in_file - 1) {
        return absl::DataLossError(fmt::format(
            "pipeline state: record {} of {} not found again at offset {} (the file changed?)",
            in_file - 1, RedactUri(uri), *last_offset));
      }
    } else {
      DATAECHO_ASSIGN_OR_RETURN(reader, OpenNth(i));
      DATAECHO_RETURN_IF_ERROR(internal::SkipRecords(*reader, in_file, uri, last_crc, &last));
    }
    DATAECHO_RETURN_IF_ERROR(internal::CheckFingerprint(*reader, fingerprint, uri));
    if (fingerprint.has_value()) fingerprints_.emplace(order_[i], *fingerprint);
    files_.Add(1);
    in_file_ = in_file;
    last_ = std::move(last);
    absl::MutexLock lock(&mu_);
    reader_ = std::move(reader);
    current_ = reader_.get();
    if (cancelled_) current_->Cancel();
    return absl::OkStatus();
  }

  void NoteOpenFile() override {
    if (reader_ != nullptr) NoteFingerprint(order_[next_file_ - 1], *reader_);
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

  bool IsCancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  size_t next_file_ = 0;
  uint64_t in_file_ = 0;                      // records taken from the open file
  Record last_;                               // the payload (and CRC, if known) of the last of them
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
                                        std::shared_ptr<const CorruptionBudget> budget) {
  if (options.cycle_length <= 1) {
    return std::make_unique<SequentialSource>(std::move(uris), std::move(open), options,
                                              std::move(name), std::move(budget),
                                              std::move(open_range));
  }
  if (options.buffered_records == 0) options.buffered_records = 1;
  return internal::MakeInterleavedSource(std::move(uris), std::move(open), options, std::move(name),
                                         std::move(budget), std::move(open_range));
}

}  // namespace internal

StagePtr<Record> MakeRecordSource(std::vector<std::string> uris, RecordFileOpener open,
                                  InterleaveOptions options, std::string name,
                                  std::shared_ptr<const CorruptionBudget> budget) {
  return internal::MakeRangedRecordSource(std::move(uris), std::move(open), {}, options,
                                          std::move(name), std::move(budget));
}

}  // namespace dataecho
