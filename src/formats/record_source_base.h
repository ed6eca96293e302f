// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/record_source_base.h: what both record source modes share (the
// stats, the file order of an epoch, opening the i-th file, references to
// records), for record_source.cc (one file after the other) and
// record_source_interleaved.cc (k files at once). Not part of the public API.
#ifndef DATAECHO_SRC_FORMATS_RECORD_SOURCE_BASE_H_
#define DATAECHO_SRC_FORMATS_RECORD_SOURCE_BASE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/internal/counter.h"
#include "dataecho/status_macros.h"
#include "formats/record_source_state.h"

namespace dataecho::internal {

// The order in which epoch `epoch` reads `n` files (indices into the list).
std::vector<size_t> FileOrder(size_t n, const InterleaveOptions& options, uint32_t epoch);

// A source whose list is of ranges of files (range_source.h): its records
// name their dataset file (the file's number in `uris`), not their range, so
// references to them (and the files' fingerprints) are by dataset file, and
// are read again from `uris` with `open`, a whole file by its number.
struct RereadFiles {
  std::vector<std::string> uris;
  RecordFileOpener open;
  std::vector<uint64_t> entry_file;  // the file of each entry of the source's list
};

// Base for both modes: stats and the stage interface.
class RecordSourceBase : public Stage<Record> {
 public:
  RecordSourceBase(std::vector<std::string> uris, RecordFileOpener open, InterleaveOptions options,
                   std::string name, std::shared_ptr<const CorruptionBudget> budget,
                   RecordRangeOpener open_range = {},
                   std::optional<uint64_t> list_hash = std::nullopt,
                   std::shared_ptr<const RereadFiles> reread_files = nullptr)
      : uris_(std::move(uris)),
        open_(std::move(open)),
        open_range_(std::move(open_range)),
        list_hash_(list_hash),
        reread_files_(std::move(reread_files)),
        options_(options),
        name_(std::move(name)),
        budget_(std::move(budget)),
        order_(FileOrder(uris_.size(), options_, 0)) {
    // File numbers must fit above the record bits (record.h) and differ.
    const uint64_t max_file = (uint64_t{1} << (64 - kRecordIndexBits)) - 1;
    if (options_.file_index_stride == 0 ||
        (!uris_.empty() && (options_.first_file_index > max_file ||
                            (max_file - options_.first_file_index) / options_.file_index_stride <
                                uris_.size() - 1))) {
      status_ = absl::InvalidArgumentError(absl::StrCat(
          name_, ": files numbered from ", options_.first_file_index, " by ",
          options_.file_index_stride, " (InterleaveOptions::first_file_index, file_index_stride)",
          " must be distinct and at most ", max_file));
    }
  }

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

  // Records are referenced by (source_index, offset, epoch, CRC), after the
  // fingerprints of their files, and read again from their files
  // (record_source_state.h). References name files by their positions in
  // uris_ (the records carry job-wide numbers: ToJobWide).
  absl::Status SaveRefs(std::span<const Record* const> items, StateWriter& w) override {
    NoteOpenFile();
    return SaveRefsByPosition(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<Record>* out) override {
    const size_t first = out->size();
    if (reread_files_ != nullptr) {  // a range source: whole files, by their numbers
      DATAECHO_RETURN_IF_ERROR(
          internal::RereadRecords(r, n, reread_files_->uris, reread_files_->open, {}, out));
    } else {
      DATAECHO_RETURN_IF_ERROR(internal::RereadRecords(r, n, uris_, open_, open_range_, out));
    }
    for (size_t i = first; i < out->size(); ++i) ToJobWide((*out)[i]);
    return absl::OkStatus();
  }

 protected:
  // SaveRefs() of records that left this source: their files named by their
  // positions in uris_, with the files' fingerprints.
  absl::Status SaveRefsByPosition(std::span<const Record* const> items, StateWriter& w) const {
    if (reread_files_ != nullptr) {
      // A range source: the fingerprints are of list entries (ranges), the
      // references name dataset files.
      Fingerprints by_file;
      for (const auto& [entry, fp] : fingerprints_) {
        if (entry < reread_files_->entry_file.size())
          by_file.emplace(reread_files_->entry_file[entry], fp);
      }
      internal::SaveRecordRefs(items, by_file, w);
      return absl::OkStatus();
    }
    if (!Renumbered()) {
      internal::SaveRecordRefs(items, fingerprints_, w);
      return absl::OkStatus();
    }
    std::vector<Record> local;
    local.reserve(items.size());
    for (const Record* item : items) {
      local.push_back(*item);
      DATAECHO_RETURN_IF_ERROR(ToPosition(local.back()));
    }
    std::vector<const Record*> ptrs;
    ptrs.reserve(local.size());
    for (const Record& rec : local) ptrs.push_back(&rec);
    internal::SaveRecordRefs(ptrs, fingerprints_, w);
    return absl::OkStatus();
  }

  uint64_t Hash() const {
    OptionsHash h;
    h.Add(static_cast<uint64_t>(uris_.size())).Add(options_.file_order_seed);
    h.Add(static_cast<uint64_t>(options_.shuffle_files_each_epoch));
    if (options_.first_file_index != 0 || options_.file_index_stride != 1) {
      h.Add(options_.first_file_index).Add(options_.file_index_stride);
    }
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
      ToJobWide(**result);
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

  // Keeps the fingerprint of file `file`, read by `reader`, if it costs no
  // I/O (its format gives one and the reader passed the file's head; else the
  // file has none in a state). Consumer only.
  void NoteFingerprint(uint64_t file, const RecordFileReader& reader) {
    if (fingerprints_.contains(file)) return;
    if (std::optional<FileFingerprint> fp = KnownFingerprintOf(reader)) {
      fingerprints_.emplace(file, *fp);
    }
  }
  // The fingerprint of the file being read now, if any (the sequential source).
  virtual void NoteOpenFile() {}
  // Whether files are numbered other than by their positions in uris_.
  bool Renumbered() const {
    return options_.first_file_index != 0 || options_.file_index_stride != 1;
  }
  // Readers number a record's file by its position in uris_; the records
  // leave the source with the file's job-wide number, first_file_index +
  // position * file_index_stride (InterleaveOptions), and references come
  // back with it.
  void ToJobWide(Record& rec) const {
    if (!Renumbered()) return;
    const uint64_t position = rec.source_index >> kRecordIndexBits;
    rec.source_index =
        MakeSourceIndex(options_.first_file_index + position * options_.file_index_stride,
                        rec.source_index & ((uint64_t{1} << kRecordIndexBits) - 1));
  }
  absl::Status ToPosition(Record& rec) const {
    const uint64_t number = rec.source_index >> kRecordIndexBits;
    const uint64_t stride = options_.file_index_stride;
    if (number < options_.first_file_index || (number - options_.first_file_index) % stride != 0 ||
        (number - options_.first_file_index) / stride >= uris_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": a record of file number ", number, " is not one of this source's ",
          uris_.size(), " files (numbered from ", options_.first_file_index, " by ", stride, ")"));
    }
    rec.source_index = MakeSourceIndex((number - options_.first_file_index) / stride,
                                       rec.source_index & ((uint64_t{1} << kRecordIndexBits) - 1));
    return absl::OkStatus();
  }

  const std::vector<std::string> uris_;
  const RecordFileOpener open_;
  const RecordRangeOpener open_range_;  // may be empty
  // What the list's entries are besides their URIs, if they are not whole
  // files (a range source: the hash of its ranges). The interleaved source's
  // state hash covers it, so that a state of another list of ranges over the
  // same files is refused, not read as positions in this one.
  const std::optional<uint64_t> list_hash_;
  const std::shared_ptr<const RereadFiles> reread_files_;  // null: the list is of files
  Fingerprints fingerprints_;  // of the files read so far (consumer only)
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

// cycle_length > 1 (record_source_interleaved.cc).
StagePtr<Record> MakeInterleavedSource(std::vector<std::string> uris, RecordFileOpener open,
                                       InterleaveOptions options, std::string name,
                                       std::shared_ptr<const CorruptionBudget> budget,
                                       RecordRangeOpener open_range,
                                       std::optional<uint64_t> list_hash = std::nullopt,
                                       std::shared_ptr<const RereadFiles> reread_files = nullptr);

// MakeRecordSource() for a format that can also read a file from an offset
// (TFRecord): a restore reads only the records it needs. `list_hash`: see
// RecordSourceBase::list_hash_ (the sequential source's state leaves it out:
// its states from before it was added still restore).
StagePtr<Record> MakeRangedRecordSource(std::vector<std::string> uris, RecordFileOpener open,
                                        RecordRangeOpener open_range, InterleaveOptions options,
                                        std::string name,
                                        std::shared_ptr<const CorruptionBudget> budget,
                                        std::optional<uint64_t> list_hash = std::nullopt,
                                        std::shared_ptr<const RereadFiles> reread_files = nullptr);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_RECORD_SOURCE_BASE_H_
