// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// checkpoint.cc: reading the state format (include/dataecho/checkpoint.h),
// the options hash and the shape check; StateWriter is in state_writer.cc.

#include "dataecho/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/crc32c.h"
#include "dataecho/internal/random.h"
#include "state_encoding.h"

namespace dataecho {
namespace {

using internal::GetFixed;
using internal::GetVarint;
using internal::kStateMagic;

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

absl::StatusOr<StateReader> StateReader::Parse(std::string_view state) {
  if (state.size() < kStateMagic.size() + 4 || state.substr(0, kStateMagic.size()) != kStateMagic) {
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
  size_t pos = kStateMagic.size();
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
