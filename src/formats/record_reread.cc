// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Reading referenced records again at a restore (record_source_state.h):
// grouped by file, nearby records in one ranged read, several reads at once.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "formats/record_source_state.h"

namespace dataecho::internal {
namespace {

// Records closer than this (offset to offset) share one ranged read: reading
// the bytes between costs less than another request.
constexpr uint64_t kCoalesceBytes = uint64_t{256} << 10;
// Reads in flight at once.
constexpr size_t kMaxReadsInFlight = 8;
// Read-ahead of a ranged read past its last record's offset (that record's
// length is not in the state).
constexpr uint64_t kTailBytes = uint64_t{64} << 10;
constexpr uint64_t kMaxReadAhead = uint64_t{8} << 20;

struct Ref {
  uint64_t source_index = 0;
  uint64_t offset = 0;
  uint32_t epoch = 0;
  std::optional<uint32_t> crc;  // of the payload (states of version 2 on)
};

// One read: records [first, last] of a file (distinct source indices in file
// order, each with the references that want it).
struct Read {
  uint64_t file = 0;
  bool from_start = false;         // the file cannot be read from an offset
  bool check_fingerprint = false;  // the first read of its file
  std::vector<uint64_t> records;   // source indices, ascending
};

class Rereader {
 public:
  Rereader(const std::vector<std::string>& uris, const RecordFileOpener& open,
           const RecordRangeOpener& open_range, std::vector<Ref> refs,
           std::map<uint64_t, std::optional<FileFingerprint>> fingerprints)
      : uris_(uris),
        open_(open),
        open_range_(open_range),
        refs_(std::move(refs)),
        fingerprints_(std::move(fingerprints)),
        got_(refs_.size()) {}

  absl::Status Run(std::vector<Record>* out) {
    DATAECHO_RETURN_IF_ERROR(Plan());
    const size_t workers = std::min(kMaxReadsInFlight, reads_.size());
    if (workers <= 1) {
      Work();
    } else {
      std::vector<std::thread> threads;
      for (size_t i = 0; i < workers; ++i) threads.emplace_back([this] { Work(); });
      for (std::thread& t : threads) t.join();
    }
    DATAECHO_RETURN_IF_ERROR(error_);
    for (Record& rec : got_) out->push_back(std::move(rec));
    return absl::OkStatus();
  }

 private:
  // Groups the references by file, then by nearness.
  absl::Status Plan() {
    // file -> source_index -> the offset the references give it
    std::map<uint64_t, std::map<uint64_t, uint64_t>> by_file;
    for (size_t i = 0; i < refs_.size(); ++i) {
      const Ref& ref = refs_[i];
      const uint64_t file = ref.source_index >> kRecordIndexBits;
      if (file >= uris_.size()) {
        return absl::DataLossError(absl::StrCat("pipeline state: a record of file ", file,
                                                ", the source has ", uris_.size()));
      }
      auto [it, added] = by_file[file].emplace(ref.source_index, ref.offset);
      if (!added && it->second != ref.offset) {
        return absl::DataLossError(absl::StrCat("pipeline state: record ",
                                                IndexInFile(ref.source_index), " of file ", file,
                                                " at two offsets"));
      }
      wanted_[ref.source_index].push_back(i);
    }
    for (auto& [file, records] : by_file) {
      const bool ranged = open_range_ && open_range_.ranged(uris_[file]);
      Read read;
      read.file = file;
      read.from_start = !ranged;
      read.check_fingerprint = true;
      uint64_t last_offset = 0;
      for (auto [source_index, offset] : records) {
        if (!read.records.empty() && offset < last_offset) {
          return absl::DataLossError(absl::StrCat("pipeline state: the records of file ", file,
                                                  " are not in file order"));
        }
        if (ranged && !read.records.empty() && offset - last_offset > kCoalesceBytes) {
          reads_.push_back(std::move(read));
          read = Read();
          read.file = file;
        }
        read.records.push_back(source_index);
        last_offset = offset;
      }
      reads_.push_back(std::move(read));
    }
    return absl::OkStatus();
  }

  void Work() {
    while (!failed_.load(std::memory_order_relaxed)) {
      const size_t i = next_.fetch_add(1);
      if (i >= reads_.size()) return;
      if (absl::Status s = Do(reads_[i]); !s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_.ok()) error_ = std::move(s);
        failed_.store(true, std::memory_order_relaxed);
      }
    }
  }

  absl::Status Do(const Read& read) {
    const std::string& uri = uris_[read.file];
    const Ref& first = refs_[wanted_.at(read.records.front()).front()];
    std::unique_ptr<RecordFileReader> reader;
    if (read.from_start) {
      DATAECHO_ASSIGN_OR_RETURN(reader, open_(uri, read.file));
    } else {
      const Ref& last = refs_[wanted_.at(read.records.back()).front()];
      const uint64_t read_ahead = std::min(last.offset - first.offset + kTailBytes, kMaxReadAhead);
      DATAECHO_ASSIGN_OR_RETURN(
          reader, open_range_.open(uri, read.file, first.offset, IndexInFile(first.source_index),
                                   static_cast<size_t>(read_ahead)));
    }
    for (size_t found = 0; found < read.records.size();) {
      if (failed_.load(std::memory_order_relaxed)) return absl::OkStatus();
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> rec, reader->Next());
      const uint64_t want = read.records[found];
      if (!rec.has_value() || rec->source_index > want) {
        return absl::DataLossError(absl::StrCat(
            "pipeline state: record ", IndexInFile(want), " of ", RedactUri(uri),
            " not found again at offset ", refs_[wanted_.at(want).front()].offset,
            " (the file changed?)"));
      }
      if (rec->source_index < want) continue;
      ++found;
      std::optional<uint32_t> crc;  // computed once, if a reference has one to compare
      for (size_t i : wanted_.at(want)) {
        const Ref& ref = refs_[i];
        if (ref.offset != rec->offset) {
          return absl::DataLossError(absl::StrCat(
              "pipeline state: record ", IndexInFile(want), " of ", RedactUri(uri),
              " is at offset ", rec->offset, ", the state says ", ref.offset,
              " (the file changed?)"));
        }
        if (ref.crc.has_value()) {
          if (!crc.has_value()) crc = rec->PayloadCrc32c();
          if (*crc != *ref.crc) return ContentsChanged(uri, IndexInFile(want), *rec, *ref.crc);
        }
        got_[i] = *rec;
        got_[i].epoch = ref.epoch;
      }
    }
    // Once per file (after the reads, when a reader from the start has its head).
    if (read.check_fingerprint) {
      auto it = fingerprints_.find(read.file);
      if (it != fingerprints_.end()) {
        DATAECHO_RETURN_IF_ERROR(CheckFingerprint(*reader, it->second, uri));
      }
    }
    return absl::OkStatus();
  }

  const std::vector<std::string>& uris_;
  const RecordFileOpener& open_;
  const RecordRangeOpener& open_range_;
  const std::vector<Ref> refs_;
  std::map<uint64_t, std::optional<FileFingerprint>> fingerprints_;  // (every file in it)
  std::map<uint64_t, std::vector<size_t>> wanted_;  // source_index -> positions in refs_
  std::vector<Read> reads_;
  std::vector<Record> got_;  // written by the reads, each its own positions
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  absl::Status error_;  // the first read's error (mu_)
};

}  // namespace

absl::Status RereadRecords(StateReader& r, size_t n, const std::vector<std::string>& uris,
                           const RecordFileOpener& open, const RecordRangeOpener& open_range,
                           std::vector<Record>* out) {
  std::map<uint64_t, std::optional<FileFingerprint>> fingerprints;
  const bool with_files = r.version() >= 3;
  if (with_files) {
    const uint64_t files = r.Count(2);
    for (uint64_t i = 0; i < files && r.status().ok(); ++i) {
      const uint64_t file = r.U64();
      fingerprints[file] = RestoreFingerprint(r);
    }
    DATAECHO_RETURN_IF_ERROR(r.status());
  }
  const bool with_crc = r.version() >= 2;
  std::vector<Ref> refs(n);
  for (size_t i = 0; i < n; ++i) {
    refs[i].source_index = r.U64();
    refs[i].offset = r.U64();
    refs[i].epoch = static_cast<uint32_t>(r.U64());
    if (with_crc) refs[i].crc = r.Fixed32();
    DATAECHO_RETURN_IF_ERROR(r.status());
    const uint64_t file = refs[i].source_index >> kRecordIndexBits;
    if (with_files && !fingerprints.contains(file)) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: a record of file ", file, ", not in its list of files"));
    }
    if (!with_files) fingerprints.emplace(file, std::nullopt);
  }
  Rereader rereader(uris, open, open_range, std::move(refs), std::move(fingerprints));
  return rereader.Run(out);
}

}  // namespace dataecho::internal
