// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "formats/record_source_state.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"

namespace dataecho::internal {
namespace {

// DATA_LOSS: record `index` of `uri` is where the state says, but its bytes
// are not those the state was saved with.
absl::Status ContentsChanged(const std::string& uri, uint64_t index, const Record& rec,
                             uint32_t saved_crc) {
  return absl::DataLossError(fmt::format(
      "pipeline state: record {} of {} (at offset {}) has other contents than when the state "
      "was saved (CRC-32C {:08x}, the state says {:08x}): the file changed",
      index, RedactUri(uri), rec.offset, rec.PayloadCrc32c(), saved_crc));
}

}  // namespace

void SaveRecordRefs(std::span<const Record* const> items, StateWriter& w) {
  for (const Record* r : items) {
    w.U64(r->source_index);
    w.U64(r->offset);
    w.U64(r->epoch);
    w.Fixed32(r->PayloadCrc32c());
  }
}

absl::Status RereadRecords(StateReader& r, size_t n, const std::vector<std::string>& uris,
                           const RecordFileOpener& open, std::vector<Record>* out) {
  struct Ref {
    uint64_t source_index = 0;
    uint64_t offset = 0;
    uint32_t epoch = 0;
    std::optional<uint32_t> crc;  // of the payload (states of version 2 on)
  };
  const bool with_crc = r.version() >= 2;
  std::vector<Ref> refs(n);
  // file -> (source_index -> the positions in `refs` that want it)
  std::map<uint64_t, std::map<uint64_t, std::vector<size_t>>> by_file;
  for (size_t i = 0; i < n; ++i) {
    refs[i].source_index = r.U64();
    refs[i].offset = r.U64();
    refs[i].epoch = static_cast<uint32_t>(r.U64());
    if (with_crc) refs[i].crc = r.Fixed32();
    DATAECHO_RETURN_IF_ERROR(r.status());
    by_file[refs[i].source_index >> kRecordIndexBits][refs[i].source_index].push_back(i);
  }
  std::vector<Record> got(n);
  for (auto& [file, wanted] : by_file) {
    if (file >= uris.size()) {
      return absl::DataLossError(absl::StrCat("pipeline state: a record of file ", file,
                                              ", the source has ", uris.size()));
    }
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<RecordFileReader> reader, open(uris[file], file));
    size_t found = 0;
    while (found < wanted.size()) {
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> rec, reader->Next());
      if (!rec.has_value()) break;
      auto it = wanted.find(rec->source_index);
      if (it == wanted.end()) continue;
      ++found;
      const uint64_t index = rec->source_index & ((uint64_t{1} << kRecordIndexBits) - 1);
      std::optional<uint32_t> crc;  // computed once, if a reference has one to compare
      for (size_t i : it->second) {
        if (refs[i].offset != rec->offset) {
          return absl::DataLossError(absl::StrCat(
              "pipeline state: record ", index, " of ", RedactUri(uris[file]), " is at offset ",
              rec->offset, ", the state says ", refs[i].offset, " (the file changed?)"));
        }
        if (refs[i].crc.has_value()) {
          if (!crc.has_value()) crc = rec->PayloadCrc32c();
          if (*crc != *refs[i].crc) return ContentsChanged(uris[file], index, *rec, *refs[i].crc);
        }
        got[i] = *rec;
        got[i].epoch = refs[i].epoch;
      }
    }
    if (found < wanted.size()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", wanted.size() - found,
                                              " records not found again in ", RedactUri(uris[file]),
                                              " (the file changed?)"));
    }
  }
  for (Record& rec : got) out->push_back(std::move(rec));
  return absl::OkStatus();
}

absl::Status SkipRecords(RecordFileReader& reader, uint64_t n, const std::string& uri,
                         std::optional<uint32_t> last_crc, Record* last) {
  for (uint64_t i = 0; i < n; ++i) {
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> rec, reader.Next());
    if (!rec.has_value()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", RedactUri(uri), " has ", i,
                                              " records, the state says at least ", n));
    }
    if (i + 1 < n) continue;
    if (last_crc.has_value() && rec->PayloadCrc32c() != *last_crc) {
      return ContentsChanged(uri, rec->source_index & ((uint64_t{1} << kRecordIndexBits) - 1), *rec,
                             *last_crc);
    }
    if (last != nullptr) *last = *std::move(rec);
  }
  return absl::OkStatus();
}

}  // namespace dataecho::internal
