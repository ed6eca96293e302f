// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/record_source.h"

#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/random.h"
#include "dataecho/status_macros.h"
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
  // one, which a restore reopens and reads up to there, checking that the
  // last of them still has the payload CRC-32C saved (a file rewritten with
  // records of the same lengths, or reordered, is DATA_LOSS, not other data).
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
    if (reader_ != nullptr && in_file_ > 0) w.Fixed32(last_.PayloadCrc32c());
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
    Record last;
    DATAECHO_RETURN_IF_ERROR(
        internal::SkipRecords(*reader, in_file, uris_[order_[i]], last_crc, &last));
    in_file_ = in_file;
    last_ = std::move(last);
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
        last_.data = (*next)->data;  // a handle: its CRC is computed only if a state is saved
        last_.crc32c = (*next)->crc32c;
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
  Record last_;                               // the payload (and CRC, if known) of the last of them
  std::unique_ptr<RecordFileReader> reader_;  // written under mu_, read by the consumer
  absl::Mutex mu_;
  RecordFileReader* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
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
  return internal::MakeInterleavedSource(std::move(uris), std::move(open), options, std::move(name),
                                         std::move(budget));
}

}  // namespace dataecho
