// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "internal/checkpoint_file.h"

#include <utility>

#include "dataecho/crc32c.h"
#include "fmt/format.h"

namespace dataecho::internal {
namespace {

constexpr std::string_view kMagic = "DETK";

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLe(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  return v;
}

absl::Status Damaged(std::string_view name, std::string_view why) {
  return absl::DataLossError(fmt::format("checkpoint {}: {}", name, why));
}

}  // namespace

std::string EncodeCheckpointHeader(int64_t step, const std::vector<CheckpointSection>& sections) {
  std::string out(kMagic);
  PutLe(out, kCheckpointFileVersion, 4);
  PutLe(out, static_cast<uint64_t>(step), 8);
  PutLe(out, sections.size(), 4);
  for (const CheckpointSection& s : sections) {
    PutLe(out, s.name.size(), 4);
    out += s.name;
    PutLe(out, s.bytes.size(), 8);
  }
  PutLe(out, Crc32c(out.data(), out.size()), 4);
  return out;
}

absl::StatusOr<uint64_t> CheckpointHeaderSize(std::string_view name, std::string_view prefix) {
  if (prefix.size() >= 4 && prefix.substr(0, 4) != kMagic) {
    return Damaged(name, "not a checkpoint file (bad magic)");
  }
  if (prefix.size() < kCheckpointFixedHeader) return kCheckpointFixedHeader;
  const uint64_t version = GetLe(prefix, 4, 4);
  if (version != kCheckpointFileVersion) {
    return Damaged(name, fmt::format("format version {}, this program reads {}", version,
                                     kCheckpointFileVersion));
  }
  const uint64_t count = GetLe(prefix, 16, 4);
  if (count > kMaxCheckpointSections) {
    return Damaged(name, fmt::format("{} sections (at most {})", count, kMaxCheckpointSections));
  }
  // Walk the section table as far as `prefix` holds it.
  uint64_t at = kCheckpointFixedHeader;
  for (uint64_t i = 0; i < count; ++i) {
    if (prefix.size() < at + 4) return at + 4;
    const uint64_t length = GetLe(prefix, at, 4);
    if (length > kMaxCheckpointSectionName) {
      return Damaged(name, fmt::format("a section name of {} bytes (at most {})", length,
                                       kMaxCheckpointSectionName));
    }
    at += 4 + length + 8;
  }
  return at + 4;  // the header's CRC
}

absl::StatusOr<CheckpointHeader> ParseCheckpointHeader(std::string_view name,
                                                       std::string_view header) {
  absl::StatusOr<uint64_t> size = CheckpointHeaderSize(name, header);
  if (!size.ok()) return size.status();
  if (header.size() < *size) {
    return Damaged(name,
                   fmt::format("{} bytes, shorter than its header (torn write?)", header.size()));
  }
  // The size is final once the whole table is in `header` (the walk needed no more).
  if (absl::StatusOr<uint64_t> again = CheckpointHeaderSize(name, header.substr(0, *size));
      !again.ok() || *again != *size) {
    return Damaged(name, "a header that does not hold together");
  }
  const uint32_t stored = static_cast<uint32_t>(GetLe(header, *size - 4, 4));
  const uint32_t crc = Crc32c(header.data(), *size - 4);
  if (stored != crc) {
    return Damaged(
        name, fmt::format("header CRC-32C {:08x}, its bytes give {:08x} (corrupt)", stored, crc));
  }
  CheckpointHeader h;
  h.step = static_cast<int64_t>(GetLe(header, 8, 8));
  if (h.step < 0) return Damaged(name, "a negative step");
  h.header_bytes = *size;
  uint64_t total = *size + 4;  // the trailing CRC
  const uint64_t count = GetLe(header, 16, 4);
  uint64_t at = kCheckpointFixedHeader;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t length = GetLe(header, at, 4);
    h.names.emplace_back(header.substr(at + 4, length));
    const uint64_t bytes = GetLe(header, at + 4 + length, 8);
    if (__builtin_add_overflow(total, bytes, &total)) {
      return Damaged(name, "section lengths that overflow");
    }
    h.sizes.push_back(bytes);
    at += 4 + length + 8;
  }
  h.file_bytes = total;
  return h;
}

}  // namespace dataecho::internal
