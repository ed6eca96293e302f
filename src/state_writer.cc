// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// state_writer.cc: StateWriter (include/dataecho/checkpoint.h): sections
// written, sealed once, appended, reused, and encoded as a string or a Cord.

#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/checkpoint.h"
#include "dataecho/crc32c.h"
#include "state_encoding.h"

namespace dataecho {

using internal::kStateMagic;
using internal::PutFixed;
using internal::PutVarint;

void StateWriter::BeginStage(std::string_view name, uint64_t options_hash) {
  shape_.push_back({std::string(name), options_hash});
  if (spare_payloads_.empty()) {
    payloads_.emplace_back();
  } else {
    payloads_.push_back(std::move(spare_payloads_.back()));
    spare_payloads_.pop_back();
  }
}

void StateWriter::U64(uint64_t v) { PutVarint(payloads_.empty() ? &loose_ : &payloads_.back(), v); }
void StateWriter::I64(int64_t v) {
  U64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}
void StateWriter::Double(double v) {
  PutFixed(payloads_.empty() ? &loose_ : &payloads_.back(), std::bit_cast<uint64_t>(v), 8);
}
void StateWriter::Fixed32(uint32_t v) {
  PutFixed(payloads_.empty() ? &loose_ : &payloads_.back(), v, 4);
}
void StateWriter::Bytes(std::string_view s) {
  U64(s.size());
  (payloads_.empty() ? loose_ : payloads_.back()).append(s);
}

// Sections encoded once (StateWriter::Seal), with their CRC-32C.
struct StateWriter::Sealed {
  std::string bytes;
  uint32_t crc = 0;
  size_t stages = 0;
  size_t payload_bytes = 0;
};

namespace {
// A section buffer larger than this is freed, not kept for the next write.
constexpr size_t kMaxSparePayload = 64 << 10;

// Takes `p`'s buffer into `spares` for a later section (if it has one worth
// keeping), or frees it; `p` is left empty.
void Spare(std::string& p, std::vector<std::string>& spares) {
  const size_t capacity = p.capacity();
  if (capacity > std::string().capacity() && capacity <= kMaxSparePayload) {
    p.clear();
    spares.push_back(std::move(p));
  }
  std::string().swap(p);
}
}  // namespace

void StateWriter::Reset() {
  for (std::string& p : payloads_) Spare(p, spare_payloads_);
  payloads_.clear();
  shape_.clear();
  loose_.clear();
  anchors_.clear();
  // A block this writer sealed and never handed out (Append, FinishCord) is
  // its alone.
  if (!handed_out_.v.load(std::memory_order_relaxed) && sealed_.size() == 1 &&
      sealed_[0].block.get() == sealed_here_ &&
      sealed_[0].block->bytes.capacity() <= kMaxSparePayload) {
    spare_block_ = std::move(sealed_[0].block);
  }
  sealed_.clear();
  sealed_here_ = nullptr;
  handed_out_.v.store(false, std::memory_order_relaxed);
}

void StateWriter::Append(const StateWriter& sections) {
  sections.handed_out_.v.store(true, std::memory_order_relaxed);
  if (!sections.loose_.empty()) {  // keep a bug loud: an unnamed section
    shape_.push_back({std::string(), 0});
    payloads_.push_back(sections.loose_);
  }
  const size_t offset = shape_.size();
  shape_.insert(shape_.end(), sections.shape_.begin(), sections.shape_.end());
  payloads_.insert(payloads_.end(), sections.payloads_.begin(), sections.payloads_.end());
  for (const SealedRun& run : sections.sealed_) sealed_.push_back({offset + run.first, run.block});
  anchors_.insert(anchors_.end(), sections.anchors_.begin(), sections.anchors_.end());
}

void StateWriter::Seal() {
  if (!loose_.empty() || shape_.empty()) return;  // (a bug stays loud: Finish() as before)
  // A block from Reset() that no one shares is written again in place.
  std::shared_ptr<Sealed> block = spare_block_ != nullptr
                                      ? std::const_pointer_cast<Sealed>(std::move(spare_block_))
                                      : std::make_shared<Sealed>();
  spare_block_.reset();
  block->bytes.clear();
  block->crc = 0;
  block->stages = shape_.size();
  block->payload_bytes = payload_bytes();
  block->bytes.reserve(EncodedSizeBound());
  size_t checked = 0;
  EncodeSections(0, shape_.size(), &block->bytes, &block->crc, &checked);
  block->crc =
      Crc32cExtend(block->crc, block->bytes.data() + checked, block->bytes.size() - checked);
  for (std::string& p : payloads_) Spare(p, spare_payloads_);  // (the sections stay, empty)
  sealed_.clear();
  sealed_here_ = block.get();
  sealed_.push_back({0, std::move(block)});
}

size_t StateWriter::payload_bytes() const {
  size_t n = loose_.size();
  for (const std::string& p : payloads_) n += p.size();
  for (const SealedRun& run : sealed_) n += run.block->payload_bytes;
  return n;
}

void StateWriter::EncodeSections(size_t begin, size_t end, std::string* out, uint32_t* crc,
                                 size_t* checked, absl::Cord* shared) const {
  auto run = std::lower_bound(sealed_.begin(), sealed_.end(), begin,
                              [](const SealedRun& r, size_t i) { return r.first < i; });
  for (size_t i = begin; i < end;) {
    if (run != sealed_.end() && run->first == i) {
      // Checksum what came before, then take the block's bytes and CRC as they are.
      *crc = Crc32cExtend(*crc, out->data() + *checked, out->size() - *checked);
      const Sealed& block = *run->block;
      if (shared != nullptr) {
        // The block itself becomes a chunk: a reference to it, not a copy.
        shared->Append(std::move(*out));
        out->clear();
        shared->Append(absl::MakeCordFromExternal(block.bytes, [keep = run->block]() {}));
        *checked = 0;
      } else {
        out->append(block.bytes);
        *checked = out->size();
      }
      *crc = Crc32cCombine(*crc, block.crc, block.bytes.size());
      i += block.stages;
      ++run;
      continue;
    }
    PutVarint(out, shape_[i].name.size());
    *out += shape_[i].name;
    PutFixed(out, shape_[i].options_hash, 8);
    PutVarint(out, payloads_[i].size());
    *out += payloads_[i];
    ++i;
  }
}

size_t StateWriter::EncodedSizeBound() const {
  size_t size = 32 + loose_.size();  // the header, the checksum, a loose section
  for (size_t i = 0; i < shape_.size(); ++i) {
    size += shape_[i].name.size() + payloads_[i].size() + 28;  // 2 varints, the hash
  }
  for (const SealedRun& run : sealed_) size += run.block->bytes.size();
  return size;
}

void StateWriter::EncodeHeader(std::string* out) const {
  *out += kStateMagic;
  PutVarint(out, kStateVersion);
  // Bytes written outside any stage make an unreadable state (a stage's bug):
  // an extra unnamed section fails the shape check at restore.
  const bool loose = !loose_.empty();
  PutVarint(out, shape_.size() + (loose ? 1 : 0));
  if (loose) {
    PutVarint(out, 0);
    PutFixed(out, 0, 8);
    PutVarint(out, loose_.size());
    *out += loose_;
  }
}

std::string StateWriter::Finish() const {
  std::string out;
  out.reserve(EncodedSizeBound());  // one allocation
  EncodeHeader(&out);
  uint32_t crc = 0;
  size_t checked = 0;
  EncodeSections(0, shape_.size(), &out, &crc, &checked);
  crc = Crc32cExtend(crc, out.data() + checked, out.size() - checked);
  PutFixed(&out, MaskCrc32c(crc), 4);
  return out;
}

absl::Cord StateWriter::FinishCord() const {
  handed_out_.v.store(true, std::memory_order_relaxed);
  absl::Cord state;
  std::string out;  // the bytes since the last sealed block
  EncodeHeader(&out);
  uint32_t crc = 0;
  size_t checked = 0;
  EncodeSections(0, shape_.size(), &out, &crc, &checked, &state);
  crc = Crc32cExtend(crc, out.data() + checked, out.size() - checked);
  PutFixed(&out, MaskCrc32c(crc), 4);
  state.Append(std::move(out));
  return state;
}

}  // namespace dataecho
