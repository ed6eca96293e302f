// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// checkpoint_file.h (internal): one checkpoint file (checkpoint_dir.h gives
// the format): its header, written and parsed on its own so that a reader
// checks a file's header and declared length before it reads the body; the
// whole file read, parsed and written. The directory around the files (names,
// lock, what is kept, the writer thread) is checkpoint_dir.cc's.
#ifndef DATAECHO_SRC_INTERNAL_CHECKPOINT_FILE_H_
#define DATAECHO_SRC_INTERNAL_CHECKPOINT_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint_dir.h"

namespace dataecho::internal {

inline constexpr uint32_t kCheckpointFileVersion = 2;
// The fixed part of a header: magic, version, step, section count.
inline constexpr size_t kCheckpointFixedHeader = 4 + 4 + 8 + 4;
// Limits a header is checked against (a larger one is damaged).
inline constexpr uint32_t kMaxCheckpointSections = 1024;
inline constexpr uint32_t kMaxCheckpointSectionName = 4096;

// A parsed header.
struct CheckpointHeader {
  int64_t step = 0;
  std::vector<std::string> names;
  std::vector<uint64_t> sizes;
  uint64_t header_bytes = 0;  // with its CRC
  uint64_t file_bytes = 0;    // what the whole file must hold
};

// The header of a file of `sections` for `step`, its CRC included.
std::string EncodeCheckpointHeader(int64_t step, const std::vector<CheckpointSection>& sections);

// How many bytes of header `prefix` (a file's first bytes) says there are:
// kCheckpointFixedHeader while `prefix` is shorter than that, else the whole
// header's size; DATA_LOSS naming `name` if the fixed part is wrong.
absl::StatusOr<uint64_t> CheckpointHeaderSize(std::string_view name, std::string_view prefix);

// Parses a whole header (CheckpointHeaderSize() bytes), checking its CRC:
// DATA_LOSS naming `name` and what is wrong.
absl::StatusOr<CheckpointHeader> ParseCheckpointHeader(std::string_view name,
                                                       std::string_view header);

// Hands a checkpoint file's bytes to `put` in order: the header, each
// section's chunks as they are (no copy of the sections), the CRC-32C of
// them all; stops at the first `put` that returns false. What
// CheckpointDir::Encode appends and WriteCheckpointFile writes.
void EmitCheckpoint(int64_t step, const std::vector<CheckpointSection>& sections,
                    absl::FunctionRef<bool(std::string_view)> put);

// A whole checkpoint file's bytes (CheckpointDir::Parse).
absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view name, std::string_view bytes);

// Reads the file `path` as a checkpoint: regular files only (a FIFO is
// refused without waiting for a writer), its header checked before its body,
// the length it declares against the file's size. DATA_LOSS naming `path`.
absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path);

// Writes a checkpoint of `sections` to `temp_path` (the header, each
// section's chunks as they are, the CRC of them all), fsyncs it and renames
// it to `final_path`; on failure removes `temp_path`. The directory's entry is
// not synced here.
absl::Status WriteCheckpointFile(const std::string& temp_path, const std::string& final_path,
                                 int64_t step, const std::vector<CheckpointSection>& sections);

// An error of a call on `path` in a checkpoint directory, its code from
// errno: PERMISSION_DENIED for EACCES/EPERM/EROFS, UNAVAILABLE otherwise
// (ENOSPC, EIO: a write may succeed later).
absl::Status CheckpointErrno(int err, std::string_view what, std::string_view path);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_CHECKPOINT_FILE_H_
