// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "formats/record_source_state.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/object_store.h"

namespace dataecho::internal {

void SaveRecordRefs(std::span<const Record* const> items, StateWriter& w) {
  for (const Record* r : items) {
    w.U64(r->source_index);
    w.U64(r->offset);
    w.U64(r->epoch);
  }
}

absl::Status RereadRecords(StateReader& r, size_t n, const std::vector<std::string>& uris,
                           const RecordFileOpener& open, std::vector<Record>* out) {
  struct Ref {
    uint64_t source_index = 0;
    uint64_t offset = 0;
    uint32_t epoch = 0;
  };
  std::vector<Ref> refs(n);
  // file -> (source_index -> the positions in `refs` that want it)
  std::map<uint64_t, std::map<uint64_t, std::vector<size_t>>> by_file;
  for (size_t i = 0; i < n; ++i) {
    refs[i].source_index = r.U64();
    refs[i].offset = r.U64();
    refs[i].epoch = static_cast<uint32_t>(r.U64());
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
      for (size_t i : it->second) {
        if (refs[i].offset != rec->offset) {
          return absl::DataLossError(
              absl::StrCat("pipeline state: record ", rec->source_index & ((1ull << 40) - 1),
                           " of ", RedactUri(uris[file]), " is at offset ", rec->offset,
                           ", the state says ", refs[i].offset, " (the file changed?)"));
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

absl::Status SkipRecords(RecordFileReader& reader, uint64_t n, const std::string& uri) {
  for (uint64_t i = 0; i < n; ++i) {
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> rec, reader.Next());
    if (!rec.has_value()) {
      return absl::DataLossError(absl::StrCat("pipeline state: ", RedactUri(uri), " has ", i,
                                              " records, the state says at least ", n));
    }
  }
  return absl::OkStatus();
}

}  // namespace dataecho::internal
