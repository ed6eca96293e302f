// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// checkpoint_file.h: the trainers' checkpoint files (fashion_mnist_trainer and
// mpi_trainer): written atomically, the last two kept, a torn or corrupt file
// detected and skipped.
//
// A checkpoint of step N is DIR/ckpt-<N, 12 digits>.dtc:
//
//   "DETK" | version (uint32 LE, 1) | step (uint64 LE) | payload size (uint64 LE)
//   | payload | CRC-32C of everything before (uint32 LE)
//
// WriteCheckpointFile writes a temporary file in DIR, fsyncs it, renames it to
// its name, fsyncs DIR, then removes all but the newest `keep` checkpoints
// (and temporary files a killed writer left, and checkpoints of later steps: a
// resume skipped them as damaged). A process killed at any moment
// leaves the previous checkpoints intact and at most one stray temporary file.
// ReadNewestCheckpoint returns the newest checkpoint whose magic, version,
// size and CRC check; a damaged one is reported through `warn` and the one
// before it is used.
//
//   absl::Status s = trainer::WriteCheckpointFile("/ckpt", step, payload);
//   // or, with a payload in chunks (a pipeline's SaveStateCord(), not flattened):
//   absl::Status s = trainer::WriteCheckpointFile("/ckpt", step, absl::Cord(...));
//   absl::StatusOr<std::optional<trainer::CheckpointFile>> c =
//       trainer::ReadNewestCheckpoint("/ckpt", [](std::string_view w) { ... });
//   if (c.ok() && c->has_value()) payload = (*c)->payload;   // else: start fresh
//
// Thread safety: one writer per directory.
#ifndef DATAECHO_EXAMPLES_TRAINER_CHECKPOINT_FILE_H_
#define DATAECHO_EXAMPLES_TRAINER_CHECKPOINT_FILE_H_

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/cord.h"

namespace trainer {

inline constexpr uint32_t kCheckpointFileVersion = 1;

struct CheckpointFile {
  std::string path;
  int64_t step = 0;
  std::string payload;
};

// DIR/ckpt-<step>.dtc.
std::string CheckpointPath(const std::string& dir, int64_t step);

// Writes `payload` as the checkpoint of `step` (creating DIR if needed) and
// keeps the newest `keep` checkpoints up to `step` (later ones are what a
// resume skipped as damaged: removed). UNAVAILABLE naming the file and the
// failed call (open, write, fsync, rename) on an I/O error; nothing half
// written is ever left under a checkpoint's name.
absl::Status WriteCheckpointFile(const std::string& dir, int64_t step, std::string_view payload,
                                 int keep = 2);
// The same file for a payload held as a Cord: its chunks are written and
// checksummed as they are, never flattened into one string. (A template so
// that a std::string or a literal still picks the overload above.)
absl::Status WriteCheckpointFileChunks(const std::string& dir, int64_t step,
                                       const absl::Cord& payload, int keep = 2);
template <typename C>
requires std::same_as<C, absl::Cord> absl::Status WriteCheckpointFile(const std::string& dir,
                                                                      int64_t step,
                                                                      const C& payload,
                                                                      int keep = 2) {
  return WriteCheckpointFileChunks(dir, step, payload, keep);
}

// The newest complete checkpoint in DIR; std::nullopt when DIR does not exist
// or holds none. A damaged file (torn, bit-flipped, another version) is
// skipped with a warning naming it and the reason; DATA_LOSS when every
// checkpoint in DIR is damaged (starting fresh would silently drop a run).
absl::StatusOr<std::optional<CheckpointFile>> ReadNewestCheckpoint(
    const std::string& dir, const std::function<void(std::string_view)>& warn);

// The checks ReadNewestCheckpoint makes on one file's bytes: the payload, or
// DATA_LOSS saying what is wrong (`name` in the message).
absl::StatusOr<CheckpointFile> ParseCheckpointFile(std::string_view name, std::string_view bytes);

// The bytes WriteCheckpointFile writes (header, payload, CRC).
std::string EncodeCheckpointFile(int64_t step, std::string_view payload);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_CHECKPOINT_FILE_H_
