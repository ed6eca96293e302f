// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// formats/record_source_state.h: the checkpoint half of the record sources
// (record_source.cc): references to records and reading them again.
// Not part of the public API.
#ifndef DATAECHO_SRC_FORMATS_RECORD_SOURCE_STATE_H_
#define DATAECHO_SRC_FORMATS_RECORD_SOURCE_STATE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dataecho/checkpoint.h"
#include "dataecho/formats/record_source.h"

namespace dataecho::internal {

// Writes (source_index, offset, epoch, CRC-32C of the payload) of each record.
void SaveRecordRefs(std::span<const Record* const> items, StateWriter& w);

// Reads `n` references and the records they name, each file opened once
// (`open(uris[file], file)`) and read from its start up to its last needed
// record; appends them in the references' order, stamped with their epochs.
// DATA_LOSS (naming the file and offset) if a record is not where it was or,
// for a state of version 2 on, does not have the same payload CRC-32C (a file
// rewritten with other records of the same lengths).
absl::Status RereadRecords(StateReader& r, size_t n, const std::vector<std::string>& uris,
                           const RecordFileOpener& open, std::vector<Record>* out);

// Reads and drops the first `n` records of `reader` (the records the consumer
// had of a file when its state was saved). DATA_LOSS if the file has fewer,
// or if `last_crc` is given and the n-th record's payload CRC-32C differs.
// `*last` (if not null) gets the n-th record.
absl::Status SkipRecords(RecordFileReader& reader, uint64_t n, const std::string& uri,
                         std::optional<uint32_t> last_crc = std::nullopt, Record* last = nullptr);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_RECORD_SOURCE_STATE_H_
