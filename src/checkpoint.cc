// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// checkpoint.cc: the state format (include/dataecho/checkpoint.h).

#include "dataecho/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/crc32c.h"
#include "dataecho/internal/random.h"

namespace dataecho {
namespace {

constexpr std::string_view kMagic = "DEST";

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads a varint at *pos of `s` (not past `end`); false if truncated or over 64 bits.
bool GetVarint(std::string_view s, size_t* pos, size_t end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *pos < end; shift += 7) {
    const auto byte = static_cast<uint8_t>(s[(*pos)++]);
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

uint64_t GetFixed(std::string_view s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(s[pos + i])) << (8 * i);
  return v;
}

absl::Status Corrupt(const std::string& what) {
  return absl::DataLossError(absl::StrCat("pipeline state: ", what));
}

}  // namespace

OptionsHash& OptionsHash::Add(uint64_t v) {
  h_ = internal::MixSeed(h_, v);
  return *this;
}
OptionsHash& OptionsHash::Add(double v) { return Add(std::bit_cast<uint64_t>(v)); }
OptionsHash& OptionsHash::Add(std::string_view s) {
  Add(static_cast<uint64_t>(s.size()));
  return Add(static_cast<uint64_t>(Crc32c(s)));
}

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
}  // namespace

void StateWriter::Reset() {
  for (std::string& p : payloads_) {
    if (p.capacity() <= std::string().capacity() || p.capacity() > kMaxSparePayload) continue;
    p.clear();
    spare_payloads_.push_back(std::move(p));
  }
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
  for (std::string& p : payloads_) {
    if (p.capacity() > kMaxSparePayload) {
      std::string().swap(p);
    } else {
      p.clear();
      spare_payloads_.push_back(std::move(p));
      p = std::string();
    }
  }
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
  *out += kMagic;
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

absl::StatusOr<StateReader> StateReader::Parse(std::string_view state) {
  if (state.size() < kMagic.size() + 4 || state.substr(0, kMagic.size()) != kMagic) {
    return Corrupt(absl::StrCat("not a dataecho pipeline state (", state.size(),
                                " bytes; no \"DEST\" magic)"));
  }
  const size_t body = state.size() - 4;
  if (UnmaskCrc32c(static_cast<uint32_t>(GetFixed(state, body, 4))) != Crc32c(state.data(), body)) {
    return Corrupt(
        absl::StrCat("checksum mismatch over ", state.size(), " bytes (truncated or corrupted)"));
  }
  StateReader r;
  r.owned_ = std::string(state.substr(0, body));
  const std::string_view s = r.owned_;
  size_t pos = kMagic.size();
  uint64_t version = 0;
  uint64_t stages = 0;
  if (!GetVarint(s, &pos, body, &version)) return Corrupt("truncated header");
  if (version < kOldestStateVersion || version > kStateVersion) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline state: format version ", version,
                                                   ", this library reads versions ",
                                                   kOldestStateVersion, " to ", kStateVersion));
  }
  r.version_ = static_cast<uint32_t>(version);
  if (!GetVarint(s, &pos, body, &stages) || stages > body) return Corrupt("bad stage count");
  for (uint64_t i = 0; i < stages; ++i) {
    uint64_t name_len = 0;
    uint64_t payload_len = 0;
    if (!GetVarint(s, &pos, body, &name_len) || name_len > body - pos ||
        body - pos - name_len < 8) {
      return Corrupt(absl::StrCat("stage ", i, ": truncated name"));
    }
    StageShape shape;
    shape.name = std::string(s.substr(pos, name_len));
    pos += name_len;
    shape.options_hash = GetFixed(s, pos, 8);
    pos += 8;
    if (!GetVarint(s, &pos, body, &payload_len) || payload_len > body - pos) {
      return Corrupt(absl::StrCat("stage ", i, " (", shape.name, "): truncated section"));
    }
    r.shape_.push_back(std::move(shape));
    r.sections_.push_back({pos, payload_len});
    pos += payload_len;
  }
  if (pos != body) return Corrupt(absl::StrCat(body - pos, " bytes after the last stage"));
  return r;
}

absl::StatusOr<StateReader> StateReader::Parse(const absl::Cord& state) {
  if (auto flat = state.TryFlat(); flat.has_value()) {
    return Parse(std::string_view(flat->data(), flat->size()));
  }
  return Parse(std::string(state));
}

absl::Status StateReader::CheckSectionRead() {
  if (in_section_ && status_.ok() && pos_ != end_) {
    Fail(Corrupt(absl::StrCat("stage ", next_section_ - 1, " (", shape_[next_section_ - 1].name,
                              "): ", end_ - pos_, " bytes left unread")));
  }
  return status_;
}

absl::Status StateReader::BeginStage(std::string_view name) {
  if (absl::Status s = CheckSectionRead(); !s.ok()) return s;
  if (next_section_ >= sections_.size()) {
    Fail(absl::InvalidArgumentError(absl::StrCat("pipeline state has ", sections_.size(),
                                                 " stages; this pipeline has more (",
                                                 std::string(name), ")")));
    return status_;
  }
  if (shape_[next_section_].name != name) {
    Fail(absl::InvalidArgumentError(absl::StrCat("pipeline state: stage ", next_section_, " is '",
                                                 shape_[next_section_].name, "' in the state but '",
                                                 std::string(name), "' here")));
    return status_;
  }
  pos_ = sections_[next_section_].begin;
  end_ = pos_ + sections_[next_section_].size;
  in_section_ = true;
  ++next_section_;
  return absl::OkStatus();
}

void StateReader::Fail(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

bool StateReader::Need(size_t n) {
  if (!status_.ok()) return false;
  if (!in_section_ || end_ - pos_ < n) {
    Fail(Corrupt(in_section_ ? absl::StrCat("stage ", next_section_ - 1, " (",
                                            shape_[next_section_ - 1].name, "): section truncated")
                             : "read outside a stage's section"));
    return false;
  }
  return true;
}

uint64_t StateReader::U64() {
  if (!Need(1)) return 0;
  uint64_t v = 0;
  if (!GetVarint(owned_, &pos_, end_, &v)) {
    Need(end_ - pos_ + 1);  // fails: truncated varint
    return 0;
  }
  return v;
}

int64_t StateReader::I64() {
  const uint64_t u = U64();
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

double StateReader::Double() {
  if (!Need(8)) return 0;
  const uint64_t v = GetFixed(owned_, pos_, 8);
  pos_ += 8;
  return std::bit_cast<double>(v);
}

uint32_t StateReader::Fixed32() {
  if (!Need(4)) return 0;
  const auto v = static_cast<uint32_t>(GetFixed(owned_, pos_, 4));
  pos_ += 4;
  return v;
}

std::string StateReader::Bytes() {
  const uint64_t n = U64();
  if (!Need(n)) return std::string();
  std::string out = owned_.substr(pos_, n);
  pos_ += n;
  return out;
}

uint64_t StateReader::Count(size_t min_bytes_each) {
  const uint64_t n = U64();
  if (!status_.ok()) return 0;
  if (min_bytes_each > 0 && n > (end_ - pos_) / min_bytes_each) {
    Need(end_ - pos_ + 1);
    return 0;
  }
  return n;
}

absl::Status StateReader::Finish() {
  // The deferred work ends first, whatever the outcome (it may hold a stage's threads).
  absl::Status deferred;
  for (std::function<absl::Status()>& wait : deferred_) {
    absl::Status s = wait();
    if (deferred.ok()) deferred = std::move(s);
  }
  deferred_.clear();
  if (absl::Status s = CheckSectionRead(); !s.ok()) return s;
  if (next_section_ != sections_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline state has ", sections_.size(),
                                                   " stages; this pipeline has ", next_section_));
  }
  return deferred;
}

void StateReader::Defer(std::function<absl::Status()> wait) {
  deferred_.push_back(std::move(wait));
}

absl::Status CompareShapes(const std::vector<StageShape>& saved,
                           const std::vector<StageShape>& here) {
  const size_t n = std::min(saved.size(), here.size());
  for (size_t i = 0; i < n; ++i) {
    if (saved[i].name != here[i].name) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline state of another shape: stage ", i,
                                                     " is '", saved[i].name, "' in the state but '",
                                                     here[i].name, "' in this pipeline"));
    }
    if (saved[i].options_hash != here[i].options_hash) {
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline state of another shape: stage ", i, " ('", here[i].name,
                       "') has other options in the state (options hash ", saved[i].options_hash,
                       " vs ", here[i].options_hash, ")"));
    }
  }
  if (saved.size() != here.size()) {
    const bool longer = saved.size() > here.size();
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline state of another shape: the state has ", saved.size(), " stages, this pipeline ",
        here.size(), "; first differing stage ", n, " ('", longer ? saved[n].name : here[n].name,
        "', only in ", longer ? "the state" : "this pipeline", ")"));
  }
  return absl::OkStatus();
}

}  // namespace dataecho
