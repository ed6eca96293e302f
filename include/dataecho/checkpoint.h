// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// checkpoint.h: the state of a pipeline as a few bytes, and back
// (docs/checkpoint.md).
//
// Pipeline<T>::SaveState() (builder.h) asks every stage, source first, to
// write its position into a StateWriter; RestoreState() hands a fresh
// pipeline of the same shape a StateReader over those bytes. A stage that
// buffers elements (Shuffle, Echo's current item) does not write their bytes:
// it asks its input for *references* (Stage::SaveRefs: a record's file and
// index, an echo copy's repeat index, ...) and, at restore, has them read
// again (Stage::Reread). So a state holds tens of bytes per buffered element.
//
//   absl::StatusOr<std::string> state = pipeline.SaveState();
//   ...   // (a new process)
//   auto again = BuildSamePipeline();
//   absl::Status s = again.RestoreState(*state);   // before its first Next()
//
//   // Saving after every step: the same bytes as a Cord, the snapshot shared.
//   absl::StatusOr<absl::Cord> cord = pipeline.SaveStateCord();
//   for (absl::string_view chunk : cord->Chunks()) Write(chunk);
//
// The format (version 3; little-endian, "varint" = LEB128):
//
//   "DEST" | varint version | varint stage count |
//   per stage, source first: varint name length, name, fixed64 options hash,
//                            varint payload length, payload |
//   fixed32 masked CRC-32C of everything before it
//
// A stage's payload is written and read by the stage alone (StateWriter's
// U64(), Bytes(), ...). The stage names and option hashes give the shape:
// restoring into a pipeline of another shape is INVALID_ARGUMENT naming the
// first stage that differs; a truncated or corrupted state is DATA_LOSS.
//
// Version 2 added the CRC-32C of each referenced record (a record source's
// references, and the record its position is after), so that a restore
// checks contents, not only offsets. Version 3 added each referenced file's
// fingerprint (its size and the CRC-32C of its first 4 KB, checked once per
// file at restore) and the offset of the record a record source's position
// is after (so a restore reopens the file there). Older states are still
// read, checking what they hold (a stage asks StateReader::version() and
// reads "version >= N adds ...").
//
// For a stage of your own: derive from UnaryStage (stage.h) and override
// SaveOwn/RestoreOwn, which write and read this stage's section after the
// input's (and, if it can be buffered by a later stage, SaveRefs/Reread);
// or override Stage::SaveState/RestoreState and call
// `w.BeginStage(name, hash)` after the input wrote its part, and
// `r.BeginStage(name)` after the input read its part.
//
// A stage with threads that run ahead of the consumer (Prefetch, a parallel
// Map) stores no read-ahead: its producer keeps a snapshot of its input's
// state (a StateWriter of its own) taken after j pulls, and SaveState()
// writes that snapshot (StateWriter::Append) and the count of elements the
// consumer took since (internal/input_snapshots.h). The producer seals its
// snapshot (StateWriter::Seal: encoded and checksummed once, there), so the
// consumer's SaveState() copies it once and checksums only its own bytes,
// and a SaveStateCord() (builder.h) does not copy it at all: the state is
// an absl::Cord whose big chunk is the sealed snapshot itself
// (StateWriter::FinishCord). A Cord's bytes, flattened, are the same state
// as SaveState()'s string: one format, on disk and in memory.
//
// Thread safety: StateWriter and StateReader are thread-compatible.
#ifndef DATAECHO_CHECKPOINT_H_
#define DATAECHO_CHECKPOINT_H_

#include <array>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "dataecho/export.h"
#include "dataecho/internal/random.h"

namespace dataecho {

// The format version SaveState() writes, and the oldest one RestoreState()
// reads.
inline constexpr uint32_t kStateVersion = 3;
inline constexpr uint32_t kOldestStateVersion = 1;

// One stage as a state names it.
struct StageShape {
  std::string name;
  uint64_t options_hash = 0;
  bool operator==(const StageShape&) const = default;
};

// Accumulates the options that change a stage's output into a 64-bit hash.
class DATAECHO_EXPORT OptionsHash {
 public:
  OptionsHash& Add(uint64_t v);
  OptionsHash& Add(int64_t v) { return Add(static_cast<uint64_t>(v)); }
  OptionsHash& Add(double v);
  OptionsHash& Add(std::string_view s);
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x6465636b70743031ull;
};

class DATAECHO_EXPORT StateWriter {
 public:
  // Starts the section of the next stage (after its input's section).
  void BeginStage(std::string_view name, uint64_t options_hash);

  void U64(uint64_t v);  // varint
  void I64(int64_t v);   // zigzag varint
  void Bool(bool v) { U64(v ? 1 : 0); }
  void Double(double v);     // 8 bytes
  void Fixed32(uint32_t v);  // 4 bytes (a checksum: varints would take 5)
  void Bytes(std::string_view s);

  // Appends the finished sections of `sections` (a chain's state written
  // earlier into a writer of its own: a Prefetch's or a parallel Map's
  // snapshot of its input) as the next stages' sections.
  // A sealed writer's sections are shared, not copied.
  void Append(const StateWriter& sections);

  // Keeps `anchor` alive as long as this writer, or one it is appended to,
  // lives: a stage's hold on what it needs while a snapshot holding its
  // state may still be restored (internal/decision_journal.h).
  void KeepAlive(std::shared_ptr<const void> anchor) { anchors_.push_back(std::move(anchor)); }

  // Encodes the sections written so far once, as Finish() lays them out,
  // with their CRC-32C: an Append() of this writer then shares them instead
  // of copying them, and Finish() copies them once and combines their CRC
  // (Crc32cCombine) instead of checksumming them again. A Prefetch's
  // snapshot is sealed on its producer's thread, so a SaveState() on the
  // consumer's costs one copy of it. REQUIRES: BeginStage() before anything
  // else is written into this writer.
  void Seal();

  // Empties the writer to be written again, keeping its buffers (its sealed
  // block only if it was never appended to another writer or made into a
  // Cord): a snapshot taken again and again into one writer allocates
  // nothing once its buffers fit.
  void Reset();

  const std::vector<StageShape>& shape() const { return shape_; }
  // Bytes written into the stages' sections so far.
  size_t payload_bytes() const;
  // The state: header, sections, checksum.
  std::string Finish() const;
  // The same bytes as Finish(), as a Cord that shares the sealed blocks
  // (Seal()) instead of copying them: each one is an external chunk holding
  // a reference to the block, and the bytes around them (the header, the
  // sections not sealed, the checksum) are small chunks of their own. The
  // CRC-32C is combined as in Finish(): a sealed block is not read.
  absl::Cord FinishCord() const;

 private:
  struct Sealed;  // checkpoint.cc
  // Stages [first, first + the block's stage count) are in `block`, encoded.
  struct SealedRun {
    size_t first = 0;
    std::shared_ptr<const Sealed> block;
  };
  // Appends the encoded sections [begin, end) to *out; *crc is the CRC-32C
  // of (*out)[0, *checked), which this may advance. With `shared`, a sealed
  // block is not copied into *out: *out (checksummed) moves to the end of
  // *shared, then the block follows it as an external chunk, and *out starts
  // empty again (*checked = 0).
  void EncodeSections(size_t begin, size_t end, std::string* out, uint32_t* crc, size_t* checked,
                      absl::Cord* shared = nullptr) const;
  // The header (magic, version, stage count, a loose section) into *out.
  void EncodeHeader(std::string* out) const;
  // At least the bytes Finish() returns.
  size_t EncodedSizeBound() const;

  std::vector<StageShape> shape_;
  std::vector<std::string> payloads_;  // empty for a sealed stage
  std::vector<SealedRun> sealed_;      // by `first`
  std::string loose_;  // written before the first BeginStage(): a bug, kept to fail loudly
  std::vector<std::shared_ptr<const void>> anchors_;  // KeepAlive()
  // For Reset(): emptied section buffers, and a sealed block no one shares.
  std::vector<std::string> spare_payloads_;
  std::shared_ptr<const Sealed> spare_block_;
  const Sealed* sealed_here_ = nullptr;  // the block Seal() made, if any
  // Set when the sealed blocks were shared: by Append(), FinishCord() (const:
  // atomic) or a copy of the writer (both are marked); a move carries it.
  struct HandedOut {
    mutable std::atomic<bool> v{false};
    HandedOut() = default;
    HandedOut(const HandedOut& o) : v(true) { o.v.store(true, std::memory_order_relaxed); }
    HandedOut(HandedOut&& o) noexcept : v(o.v.load(std::memory_order_relaxed)) {}
    HandedOut& operator=(const HandedOut& o) {
      o.v.store(true, std::memory_order_relaxed);
      v.store(true, std::memory_order_relaxed);
      return *this;
    }
    HandedOut& operator=(HandedOut&& o) noexcept {
      v.store(o.v.load(std::memory_order_relaxed), std::memory_order_relaxed);
      return *this;
    }
  } handed_out_;
};

// Reads a state. Each read past the end of a stage's section returns 0 (or
// "") and makes status() DATA_LOSS; the first error stays.
class DATAECHO_EXPORT StateReader {
 public:
  // Checks the magic, the version and the checksum and splits the sections.
  // DATA_LOSS if `state` is not a whole state; INVALID_ARGUMENT for a version
  // this library cannot read (outside kOldestStateVersion..kStateVersion).
  static absl::StatusOr<StateReader> Parse(std::string_view state);
  // The same for a state held as a Cord (Pipeline::SaveStateCord).
  static absl::StatusOr<StateReader> Parse(const absl::Cord& state);

  // The state's format version (a stage reads what that version wrote).
  uint32_t version() const { return version_; }

  const std::vector<StageShape>& shape() const { return shape_; }

  // Moves to the next stage's section, which must be named `name`
  // (INVALID_ARGUMENT otherwise; RestoreState() checked the shape before).
  absl::Status BeginStage(std::string_view name);

  uint64_t U64();
  int64_t I64();
  bool Bool() { return U64() != 0; }
  double Double();
  uint32_t Fixed32();
  std::string Bytes();
  // A count of items that take at least `min_bytes_each` bytes each: DATA_LOSS
  // (and 0) if the section has fewer bytes left than they need.
  uint64_t Count(size_t min_bytes_each = 1);

  // OK, or the first error met.
  const absl::Status& status() const { return status_; }
  // Sets status() to `s` if it is OK.
  void Fail(absl::Status s);
  // After the last stage: DATA_LOSS if a section was not read to its end;
  // else waits for the work deferred (Defer()) and returns its first error.
  absl::Status Finish();

  // Work a stage started during its restore and that must end before the
  // restore does, overlapping the stages restored after it (a record source
  // reopening its file while later stages read their buffered records
  // again): Finish() calls `wait`, which blocks until that work ends and
  // returns its status. A stage must not rely on it being called (a restore
  // that fails earlier does not call Finish()): it waits for its work itself
  // before it is next used.
  void Defer(std::function<absl::Status()> wait);

 private:
  struct Section {  // offsets into owned_ (moves keep them valid)
    size_t begin = 0;
    size_t size = 0;
  };
  bool Need(size_t n);
  absl::Status CheckSectionRead();

  std::vector<StageShape> shape_;
  std::vector<Section> sections_;
  size_t next_section_ = 0;
  size_t pos_ = 0, end_ = 0;  // the unread rest of the current section in owned_
  bool in_section_ = false;
  absl::Status status_;
  uint32_t version_ = kStateVersion;
  std::string owned_;  // the state's bytes
  std::vector<std::function<absl::Status()>> deferred_;
};

// INVALID_ARGUMENT naming the first stage where `saved` and `here` differ, or OK.
DATAECHO_EXPORT absl::Status CompareShapes(const std::vector<StageShape>& saved,
                                           const std::vector<StageShape>& here);

namespace internal {

// A generator's state, written and read back.
inline void SaveRng(const Rng& rng, StateWriter& w) {
  for (uint64_t x : rng.state()) w.U64(x);
}
inline Rng RestoreRng(StateReader& r) {
  std::array<uint64_t, 4> s{};
  for (uint64_t& x : s) x = r.U64();
  return Rng::FromState(s);
}

// Elements that name themselves (Example, Record): a source can read them
// again from (source_index, epoch).
template <typename T>
concept SelfNamed = requires(const T& v) {
  { v.source_index } -> std::convertible_to<uint64_t>;
  { v.epoch } -> std::convertible_to<uint32_t>;
  { v.repeat_index } -> std::convertible_to<uint32_t>;
};

// The repeat index of `v`, 0 for element types without one; a pair's (Zip)
// is its halves' (both are marked alike).
template <typename T>
uint32_t RepeatIndexOf(const T& v) {
  if constexpr (requires { v.repeat_index; }) {
    return static_cast<uint32_t>(v.repeat_index);
  } else if constexpr (requires {
                         v.first;
                         v.second;
                       }) {
    const uint32_t a = RepeatIndexOf(v.first);
    const uint32_t b = RepeatIndexOf(v.second);
    return a > b ? a : b;
  } else {
    return 0;
  }
}

}  // namespace internal

}  // namespace dataecho

#endif  // DATAECHO_CHECKPOINT_H_
