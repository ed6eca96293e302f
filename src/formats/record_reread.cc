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
#include "formats/record_input.h"
#include "formats/record_source_state.h"

namespace dataecho::internal {
namespace {

// Records closer than this (offset to offset) share one ranged read: reading
// the bytes between costs less than another request.
constexpr uint64_t kCoalesceBytes = uint64_t{256} << 10;
// A read longer than this (first to last offset) is split, so that the
// parts of a file are read at once too (and, over HTTP, each read is one
// ranged GET: its span and tail fit in one chunk of the store's, 4 MB by
// default, so no chunk is fetched past what the read needs).
constexpr uint64_t kMaxReadSpan = uint64_t{2} << 20;
// Reads (and fingerprint checks) in flight at once: each waits for a round
// trip or two over a remote store, so more than the cores.
constexpr size_t kMaxReadsInFlight = 16;
// Read-ahead of a ranged read past its last record's offset: that record's
// length is not in the state. (The reader's buffer refills stay within it
// too: RecordRangeOpener; over HTTP, a refill past it would fetch one more
// chunk, a round trip later.)
constexpr uint64_t kTailBytes = uint64_t{64} << 10;
constexpr uint64_t kMaxReadAhead = uint64_t{8} << 20;

struct Ref {
  uint64_t source_index = 0;
  uint64_t offset = 0;
  uint32_t epoch = 0;
  std::optional<uint32_t> crc;  // of the payload (states of version 2 on)
};

// A record to read: its source index and offset, and the references that
// want it (positions [begin, end) of Rereader::order_).
struct Wanted {
  uint64_t source_index = 0;
  uint64_t offset = 0;
  size_t begin = 0, end = 0;
};

// One read: the wanted records [first, last) (of Rereader::wanted_), of one
// file, in file order.
struct Read {
  uint64_t file = 0;
  bool from_start = false;         // the file cannot be read from an offset
  bool check_fingerprint = false;  // with the reader of this read, after it
  bool fingerprint_only = false;   // a task of its own: the file's fingerprint, no records
  size_t first = 0, last = 0;
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
  // Sorts the references by record, then groups the records by file and by
  // nearness.
  absl::Status Plan() {
    // (Sorted as pairs, keys inline: faster than indices compared through refs_.)
    std::vector<std::pair<uint64_t, size_t>> keyed(refs_.size());
    for (size_t i = 0; i < keyed.size(); ++i) keyed[i] = {refs_[i].source_index, i};
    std::sort(keyed.begin(), keyed.end());
    order_.resize(keyed.size());
    for (size_t k = 0; k < keyed.size(); ++k) order_[k] = keyed[k].second;
    for (size_t k = 0; k < order_.size(); ++k) {
      const Ref& ref = refs_[order_[k]];
      if (!wanted_.empty() && wanted_.back().source_index == ref.source_index) {
        if (wanted_.back().offset != ref.offset) {
          return absl::DataLossError(
              absl::StrCat("pipeline state: record ", IndexInFile(ref.source_index), " of file ",
                           ref.source_index >> kRecordIndexBits, " at two offsets"));
        }
        wanted_.back().end = k + 1;
        continue;
      }
      wanted_.push_back({ref.source_index, ref.offset, k, k + 1});
    }
    uint64_t read_start = 0, last_offset = 0;
    for (size_t w = 0; w < wanted_.size(); ++w) {
      const uint64_t file = wanted_[w].source_index >> kRecordIndexBits;
      const uint64_t offset = wanted_[w].offset;
      if (file >= uris_.size()) {
        return absl::DataLossError(absl::StrCat("pipeline state: a record of file ", file,
                                                ", the source has ", uris_.size()));
      }
      const bool new_file = reads_.empty() || reads_.back().file != file;
      if (!new_file && offset <= last_offset) {
        return absl::DataLossError(
            absl::StrCat("pipeline state: the records of file ", file, " are not in file order"));
      }
      if (new_file) {
        Read read;
        read.file = file;
        read.from_start = !(open_range_ && open_range_.ranged(uris_[file]));
        read.check_fingerprint = true;
        read.first = w;
        reads_.push_back(read);
        read_start = offset;
      } else if (!reads_.back().from_start &&
                 (offset - last_offset > kCoalesceBytes || offset - read_start > kMaxReadSpan)) {
        Read read;
        read.file = file;
        read.first = w;
        reads_.push_back(read);
        read_start = offset;
      }
      reads_.back().last = w + 1;
      last_offset = offset;
    }
    // A file read from an offset past its head checks its fingerprint (its
    // size and the CRC-32C of its head: one small ranged read) in a task of
    // its own, started first, at the same time as the reads, instead of
    // after its first read. (A read from the start, or from byte 0, passes
    // the head: its reader gives the fingerprint for free.)
    std::vector<Read> checks;
    for (Read& read : reads_) {
      if (!read.check_fingerprint || read.from_start || wanted_[read.first].offset == 0) continue;
      auto it = fingerprints_.find(read.file);
      read.check_fingerprint = false;
      if (it == fingerprints_.end() || !it->second.has_value()) continue;
      Read check;
      check.file = read.file;
      check.fingerprint_only = true;
      checks.push_back(check);
    }
    reads_.insert(reads_.begin(), checks.begin(), checks.end());
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
    if (read.fingerprint_only) {
      // Opened at byte 0, reading nothing: the fingerprint reads the head.
      DATAECHO_ASSIGN_OR_RETURN(
          std::unique_ptr<RecordFileReader> reader,
          open_range_.open(uri, read.file, 0, 0, static_cast<size_t>(RecordInput::kHeadBytes)));
      return CheckFingerprint(*reader, fingerprints_.at(read.file), uri);
    }
    const Wanted& first = wanted_[read.first];
    std::unique_ptr<RecordFileReader> reader;
    if (read.from_start) {
      DATAECHO_ASSIGN_OR_RETURN(reader, open_(uri, read.file));
    } else {
      const uint64_t span = wanted_[read.last - 1].offset - first.offset;
      const uint64_t read_ahead = std::min(span + kTailBytes, kMaxReadAhead);
      DATAECHO_ASSIGN_OR_RETURN(
          reader, open_range_.open(uri, read.file, first.offset, IndexInFile(first.source_index),
                                   static_cast<size_t>(read_ahead)));
    }
    for (size_t w = read.first; w < read.last;) {
      if (failed_.load(std::memory_order_relaxed)) return absl::OkStatus();
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> rec, reader->Next());
      const Wanted& want = wanted_[w];
      if (!rec.has_value() || rec->source_index > want.source_index) {
        return absl::DataLossError(absl::StrCat(
            "pipeline state: record ", IndexInFile(want.source_index), " of ", RedactUri(uri),
            " not found again at offset ", want.offset, " (the file changed?)"));
      }
      if (rec->source_index < want.source_index) continue;
      ++w;
      if (want.offset != rec->offset) {
        return absl::DataLossError(
            absl::StrCat("pipeline state: record ", IndexInFile(want.source_index), " of ",
                         RedactUri(uri), " is at offset ", rec->offset, ", the state says ",
                         want.offset, " (the file changed?)"));
      }
      std::optional<uint32_t> crc;  // computed once, if a reference has one to compare
      for (size_t k = want.begin; k < want.end; ++k) {
        const size_t i = order_[k];
        const Ref& ref = refs_[i];
        if (ref.crc.has_value()) {
          if (!crc.has_value()) crc = rec->PayloadCrc32c();
          if (*crc != *ref.crc) {
            return ContentsChanged(uri, IndexInFile(want.source_index), *rec, *ref.crc);
          }
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
  std::vector<size_t> order_;   // positions in refs_, by source index
  std::vector<Wanted> wanted_;  // the distinct records, by source index
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
