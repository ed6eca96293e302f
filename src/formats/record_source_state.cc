// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "formats/record_source_state.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/crc32c.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "formats/record_input.h"

namespace dataecho::internal {

absl::Status ContentsChanged(const std::string& uri, uint64_t index, const Record& rec,
                             uint32_t saved_crc) {
  return absl::DataLossError(fmt::format(
      "pipeline state: record {} of {} (at offset {}) has other contents than when the state "
      "was saved (CRC-32C {:08x}, the state says {:08x}): the file changed",
      index, RedactUri(uri), rec.offset, rec.PayloadCrc32c(), saved_crc));
}

std::optional<FileFingerprint> StreamFingerprint::Known(uint64_t size,
                                                        std::optional<uint32_t> stream_head) const {
  if (!stream_head.has_value()) stream_head = head_crc_;
  if (!stream_head.has_value()) return std::nullopt;
  return FileFingerprint{.size = size, .head_crc = *stream_head};
}

absl::StatusOr<FileFingerprint> StreamFingerprint::Get(uint64_t size,
                                                       std::optional<uint32_t> stream_head) {
  if (stream_head.has_value()) return FileFingerprint{.size = size, .head_crc = *stream_head};
  if (!head_crc_.has_value()) {
    if (store_ == nullptr) {
      return absl::FailedPreconditionError(
          fmt::format("{}: no store to read its head from", RedactUri(uri_)));
    }
    DATAECHO_ASSIGN_OR_RETURN(Buffer head,
                              store_->ReadRange(uri_, 0, std::min(size, RecordInput::kHeadBytes)));
    head_crc_ = Crc32c(head.data(), head.size());
  }
  return FileFingerprint{.size = size, .head_crc = *head_crc_};
}

absl::StatusOr<std::optional<FileFingerprint>> FingerprintOf(RecordFileReader& reader) {
  auto* f = dynamic_cast<FingerprintedReader*>(&reader);
  if (f == nullptr) return std::optional<FileFingerprint>();
  DATAECHO_ASSIGN_OR_RETURN(FileFingerprint fp, f->Fingerprint());
  return std::optional<FileFingerprint>(fp);
}

std::optional<FileFingerprint> KnownFingerprintOf(const RecordFileReader& reader) {
  const auto* f = dynamic_cast<const FingerprintedReader*>(&reader);
  return f == nullptr ? std::nullopt : f->KnownFingerprint();
}

void SaveFingerprint(const std::optional<FileFingerprint>& fp, StateWriter& w) {
  w.Bool(fp.has_value());
  if (!fp.has_value()) return;
  w.U64(fp->size);
  w.Fixed32(fp->head_crc);
}

std::optional<FileFingerprint> RestoreFingerprint(StateReader& r) {
  if (!r.Bool()) return std::nullopt;
  FileFingerprint fp;
  fp.size = r.U64();
  fp.head_crc = r.Fixed32();
  return fp;
}

absl::Status CheckFingerprint(RecordFileReader& reader, const std::optional<FileFingerprint>& saved,
                              const std::string& uri) {
  if (!saved.has_value()) return absl::OkStatus();
  DATAECHO_ASSIGN_OR_RETURN(std::optional<FileFingerprint> now, FingerprintOf(reader));
  if (!now.has_value()) return absl::OkStatus();
  if (now->size != saved->size) {
    return absl::DataLossError(fmt::format(
        "pipeline state: {} has {} bytes, {} when the state was saved: the file changed",
        RedactUri(uri), now->size, saved->size));
  }
  if (now->head_crc != saved->head_crc) {
    return absl::DataLossError(fmt::format(
        "pipeline state: the first {} bytes of {} have other contents than when the state was "
        "saved (CRC-32C {:08x}, the state says {:08x}): the file changed",
        std::min<uint64_t>(now->size, 4096), RedactUri(uri), now->head_crc, saved->head_crc));
  }
  return absl::OkStatus();
}

void SaveRecordRefs(std::span<const Record* const> items, const Fingerprints& known,
                    StateWriter& w) {
  // The files first, each once, with what the source knows of them.
  std::vector<uint64_t> files;
  for (const Record* r : items) files.push_back(r->source_index >> kRecordIndexBits);
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  w.U64(files.size());
  for (uint64_t file : files) {
    w.U64(file);
    auto it = known.find(file);
    SaveFingerprint(it == known.end() ? std::nullopt : std::optional<FileFingerprint>(it->second),
                    w);
  }
  for (const Record* r : items) {
    w.U64(r->source_index);
    w.U64(r->offset);
    w.U64(r->epoch);
    w.Fixed32(r->PayloadCrc32c());
  }
}

absl::Status SkipRecords(RecordFileReader& reader, uint64_t n, const std::string& uri,
                         std::optional<uint32_t> last_crc, Record* last,
                         const std::optional<FileFingerprint>& fingerprint) {
  for (uint64_t i = 0; i < n; ++i) {
    absl::StatusOr<std::optional<Record>> rec = reader.Next();
    // Fewer records than the state counted: if the file changed, say so (a
    // record with other contents says so itself, naming the record, below).
    if (!rec.ok() || !rec->has_value()) {
      DATAECHO_RETURN_IF_ERROR(CheckFingerprint(reader, fingerprint, uri));
    }
    if (!rec.ok()) return rec.status();
    if (!rec->has_value()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", RedactUri(uri), " has ", i,
                                              " records, the state says at least ", n));
    }
    if (i + 1 < n) continue;
    if (last_crc.has_value() && (*rec)->PayloadCrc32c() != *last_crc) {
      return ContentsChanged(uri, IndexInFile((*rec)->source_index), **rec, *last_crc);
    }
    if (last != nullptr) *last = **std::move(rec);
  }
  return absl::OkStatus();
}

}  // namespace dataecho::internal
