// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The interleaved record source's checkpoints and restarts
// (record_source_interleaved.h).
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "formats/record_source_interleaved.h"
#include "formats/record_source_state.h"

namespace dataecho::internal {

absl::Status InterleavedSource::StopThreads() {
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
  absl::MutexLock lock(&mu_);
  restarting_ = false;
  return absl::OkStatus();
}

void InterleavedSource::ResetSlots() {
  absl::MutexLock lock(&mu_);
  for (Slot& s : slots_) {
    s.queue.clear();
    s.done = false;
    s.worker_waiting = false;
    s.reader = nullptr;
    s.taken_file = -1;
    s.taken = 0;
    s.last = Record();
    s.resume_file = -1;
    s.resume_taken = 0;
    s.resume_crc.reset();
    s.resume_offset.reset();
  }
  turn_ = 0;
}

void InterleavedSource::Took(size_t i, int64_t file, const Record& rec) {
  Slot& s = slots_[i];
  if (s.taken_file != file) {  // a new file of this slot (files without records are passed over)
    s.taken_file = file;
    s.taken = 0;
  }
  ++s.taken;
  s.last.data = rec.data;  // a handle: its CRC is computed only if a state is saved
  s.last.crc32c = rec.crc32c;
  s.last.offset = rec.offset;
}

absl::StatusOr<std::unique_ptr<RecordFileReader>> InterleavedSource::OpenResumed(
    size_t /*slot*/, size_t f, uint64_t taken, std::optional<uint32_t> crc,
    std::optional<uint64_t> offset) {
  const std::string& uri = uris_[order_[f]];
  std::unique_ptr<RecordFileReader> reader;
  Record last;
  if (offset.has_value() && open_range_ && open_range_.ranged(uri)) {
    // The last record taken, read where it was; the reader goes on from there.
    DATAECHO_ASSIGN_OR_RETURN(
        reader, open_range_.open(uri, order_[f], *offset, taken - 1, /*read_ahead=*/0));
    DATAECHO_RETURN_IF_ERROR(SkipRecords(*reader, 1, uri, crc, &last));
    if (last.offset != *offset || IndexInFile(last.source_index) != taken - 1) {
      return absl::DataLossError(fmt::format(
          "pipeline state: record {} of {} not found again at offset {} (the file changed?)",
          taken - 1, RedactUri(uri), *offset));
    }
  } else {
    DATAECHO_ASSIGN_OR_RETURN(reader, OpenNth(f));
    DATAECHO_RETURN_IF_ERROR(SkipRecords(*reader, taken, uri, crc, &last));
  }
  return reader;
}

uint64_t InterleavedSource::StateHash() const {
  OptionsHash h;
  h.Add(Hash())
      .Add(static_cast<uint64_t>(slots_.size()))
      .Add(static_cast<uint64_t>(options_.deterministic));
  if (list_hash_.has_value()) h.Add(*list_hash_);  // a range source: its ranges
  return h.value();
}

absl::Status InterleavedSource::SaveState(StateWriter& w) {
  absl::MutexLock lock(&mu_);
  if (!status_.ok()) return CannotSaveAfterError(name_, status_);
  w.BeginStage(name_, StateHash());
  w.U64(epoch_);
  w.U64(turn_);
  w.U64(slots_.size());
  for (const Slot& s : slots_) {
    w.I64(s.taken_file);
    w.U64(s.taken);
    if (s.taken == 0) continue;
    w.Fixed32(s.last.PayloadCrc32c());
    w.U64(s.last.offset);
  }
  return absl::OkStatus();
}

absl::Status InterleavedSource::RestoreState(StateReader& r) {
  DATAECHO_RETURN_IF_ERROR(r.BeginStage(name_));
  const uint64_t epoch = r.U64();
  const uint64_t turn = r.U64();
  const uint64_t slots = r.U64();
  DATAECHO_RETURN_IF_ERROR(r.status());
  const size_t n = slots_.size();
  if (epoch > UINT32_MAX || slots != n || turn >= n) {
    return absl::DataLossError(fmt::format("pipeline state: {} has {} slots at turn {}, epoch {}",
                                           name_, slots, turn, epoch));
  }
  struct Resume {
    int64_t file = -1;
    uint64_t taken = 0;
    uint32_t crc = 0;
    uint64_t offset = 0;
  };
  std::vector<Resume> resume(n);
  for (size_t i = 0; i < n; ++i) {
    resume[i].file = r.I64();
    resume[i].taken = r.U64();
    if (resume[i].taken > 0) {
      resume[i].crc = r.Fixed32();
      resume[i].offset = r.U64();
    }
    DATAECHO_RETURN_IF_ERROR(r.status());
    const int64_t f = resume[i].file;
    const bool none = f == -1 && resume[i].taken == 0;
    const bool some = f >= 0 && static_cast<uint64_t>(f) < uris_.size() &&
                      static_cast<size_t>(f) % n == i && resume[i].taken >= 1 &&
                      resume[i].taken <= IndexInFile(~uint64_t{0});
    if (!none && !some) {
      return absl::DataLossError(fmt::format(
          "pipeline state: {} slot {} at file {} after {} records", name_, i, f, resume[i].taken));
    }
  }
  DATAECHO_RETURN_IF_ERROR(status_);
  DATAECHO_RETURN_IF_ERROR(StopThreads());
  SetEpoch(static_cast<uint32_t>(epoch));
  ResetSlots();
  {
    absl::MutexLock lock(&mu_);
    turn_ = static_cast<size_t>(turn);
    for (size_t i = 0; i < n; ++i) {
      Slot& s = slots_[i];
      if (resume[i].taken == 0) continue;
      s.taken_file = s.resume_file = resume[i].file;
      s.taken = s.resume_taken = resume[i].taken;
      s.last.crc32c = resume[i].crc;
      s.last.offset = resume[i].offset;
      if (r.version() >= 2) s.resume_crc = resume[i].crc;
      s.resume_offset = resume[i].offset;
    }
  }
  StartThreads();
  return absl::OkStatus();
}

}  // namespace dataecho::internal
