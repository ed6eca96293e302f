// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// checkpoint_dir.h: a directory of checkpoint files a training loop can trust
// (docs/checkpoint.md, "Checkpoint files").
//
// A checkpoint is one file holding named sections -- typically the pipeline's
// state (Pipeline::SaveStateCord()) and the training loop's own bytes (model
// weights, optimizer, step counters) -- under one header that gives every
// section's length, checked by CRC-32C. Writing it is atomic (a temporary
// file, fsync, rename, fsync of the directory): a process killed at any moment
// leaves the previous checkpoints intact. Reading takes the newest complete
// one and skips damaged ones with a warning naming them.
//
//   absl::StatusOr<std::unique_ptr<dataecho::CheckpointDir>> dir =
//       dataecho::CheckpointDir::OpenForWriting("/ckpt", {.keep = 2});
//   if (!dir.ok()) return dir.status();   // another writer, unwritable, not a directory
//   absl::StatusOr<std::optional<dataecho::Checkpoint>> last = (*dir)->ReadNewest();
//   if (!last.ok()) return last.status(); // every checkpoint damaged: DATA_LOSS
//   if (last->has_value()) {
//     RETURN_IF_ERROR(pipeline.RestoreState(*(*last)->Section("pipeline")));
//     model.Load(*(*last)->Section("model"));
//   }
//   for (int64_t step = ...; ; ++step) {
//     ...
//     if (step % 1000 == 0) {
//       absl::StatusOr<absl::Cord> state = pipeline.SaveStateCord();
//       if (!state.ok()) return state.status();
//       RETURN_IF_ERROR((*dir)->Write(step, {{"pipeline", *state},
//                                            {"model", absl::Cord(model.Bytes())}}));
//     }
//   }
//
// THE DIRECTORY. One directory has one writer: OpenForWriting() takes an
// exclusive lock (flock(2)) on DIR/LOCK, which names the writer (host, PID,
// start time), and refuses a second writer with FAILED_PRECONDITION naming the
// first; the lock goes with its process, so a killed writer never blocks the
// next one. It also checks at once that DIR can be written (creating it if
// needed, then creating and removing a probe file): an unwritable directory is
// an error before any training, not at the first checkpoint. Temporary files a
// killed writer left are removed only under the lock (their writer is gone).
// Readers (OpenForReading) take no lock: a rename is atomic, so a reader sees
// whole files only.
//
// READING. Only the names ckpt-<step>.dtc are considered, and of those only
// regular files (a FIFO, a device or a link to one is skipped with a warning:
// it is never opened in a way that could block). A file's header is read and
// checked first; the length it declares must equal the file's size before the
// body is read, so a huge or sparse file with a bad header costs one small
// read. A damaged file (torn, corrupt, another version, a step that differs
// from its name) is skipped with a warning naming it and the reason; when
// every checkpoint is damaged ReadNewest() is DATA_LOSS (starting fresh would
// silently drop a run).
//
// WRITING IN THE BACKGROUND. With `background = true`, Write() hands the
// sections (Cords: their chunks are shared, not copied) to a writer thread (one
// per directory, started with the first write, waiting between writes) and
// returns at once; the next Write(), Flush() and the destructor wait for it,
// and the next Write() or Flush() returns its error. The training loop's step
// then waits only for SaveStateCord() and for its own serialization.
//
// File format (version 2, little-endian):
//
//   "DETK" | fixed32 version | fixed64 step | fixed32 section count |
//   per section: fixed32 name length, name, fixed64 body length |
//   fixed32 CRC-32C of the header so far |
//   the sections' bodies, in order | fixed32 CRC-32C of everything before
//
// Thread safety: a CheckpointDir is thread-compatible (one thread calls it).
#ifndef DATAECHO_CHECKPOINT_DIR_H_
#define DATAECHO_CHECKPOINT_DIR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "dataecho/export.h"

namespace dataecho {

struct CheckpointDirOptions {
  // How many of the newest checkpoints Write() keeps (>= 1). Checkpoints of
  // later steps than the one written (damaged ones a resume skipped) go too.
  int keep = 2;
  // Receives each warning (a damaged or non-regular file skipped, a stray
  // temporary file removed). Empty: warnings are dropped.
  std::function<void(std::string_view)> warn;
  // Write() returns at once and writes on a thread of its own (see above).
  bool background = false;
};

// One section of a checkpoint: a name and its bytes.
struct CheckpointSection {
  std::string name;
  absl::Cord bytes;
};

// A checkpoint read back.
struct Checkpoint {
  std::string path;  // the file it was read from
  int64_t step = 0;
  std::vector<std::pair<std::string, std::string>> sections;  // in the order written

  // The bytes of the section named `name`, or nullptr.
  const std::string* Section(std::string_view name) const {
    for (const auto& [n, bytes] : sections) {
      if (n == name) return &bytes;
    }
    return nullptr;
  }
};

class DATAECHO_EXPORT CheckpointDir {
 public:
  // Opens (creating it if needed) `path` to write checkpoints into: takes
  // the writer's lock and checks that the directory can be written.
  // FAILED_PRECONDITION when another process holds the lock (naming it) or
  // `path` is not a directory; PERMISSION_DENIED when it cannot be written;
  // INVALID_ARGUMENT for a bad option.
  static absl::StatusOr<std::unique_ptr<CheckpointDir>> OpenForWriting(
      std::string path, CheckpointDirOptions options = {});
  // Opens `path` to read checkpoints from (no lock, nothing written). A
  // missing directory holds no checkpoint; FAILED_PRECONDITION when `path`
  // exists but is not a directory.
  static absl::StatusOr<std::unique_ptr<CheckpointDir>> OpenForReading(
      std::string path, CheckpointDirOptions options = {});

  CheckpointDir(const CheckpointDir&) = delete;
  CheckpointDir& operator=(const CheckpointDir&) = delete;
  // Waits for a background write (its error goes to `warn`), releases the lock.
  ~CheckpointDir();

  // The newest complete checkpoint, std::nullopt when there is none;
  // DATA_LOSS when every one is damaged (see READING above).
  absl::StatusOr<std::optional<Checkpoint>> ReadNewest() const;

  // Writes the checkpoint of `step` (>= 0) atomically, then keeps the newest
  // `keep`. UNAVAILABLE naming the file and the failed call on an I/O error
  // (ENOSPC included); nothing half written is ever left under a checkpoint's
  // name. FAILED_PRECONDITION on a directory opened for reading. With
  // `background`, returns the error of the previous write, if any.
  absl::Status Write(int64_t step, std::vector<CheckpointSection> sections);
  // Waits for a background write; its status (OK without one).
  absl::Status Flush();

  const std::string& path() const { return path_; }
  // DIR/ckpt-<step, 12 digits>.dtc.
  static std::string FilePath(std::string_view dir, int64_t step);

  // The bytes of a checkpoint file (what Write writes).
  static std::string Encode(int64_t step, const std::vector<CheckpointSection>& sections);
  // Parses a whole checkpoint file's bytes: DATA_LOSS naming `name` and
  // saying what is wrong. (What ReadNewest checks after the header.)
  static absl::StatusOr<Checkpoint> Parse(std::string_view name, std::string_view bytes);

 private:
  class Writer;
  CheckpointDir(std::string path, CheckpointDirOptions options, int lock_fd);

  const std::string path_;
  const CheckpointDirOptions options_;
  const int lock_fd_;               // -1: opened for reading
  std::unique_ptr<Writer> writer_;  // the background writes' thread, once one was made
};

}  // namespace dataecho

#endif  // DATAECHO_CHECKPOINT_DIR_H_
