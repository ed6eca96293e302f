// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "internal/checkpoint_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "dataecho/crc32c.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "internal/posix_file.h"

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

// Reads `n` bytes at `offset` (fewer only at the end of the file).
absl::StatusOr<std::string> ReadAt(int fd, uint64_t offset, uint64_t n, std::string_view path) {
  std::string out(n, '\0');
  size_t got = 0;
  if (const int err = PreadFully(fd, out.data(), n, offset, &got); err != 0) {
    return CheckpointErrno(err, "cannot read", path);
  }
  out.resize(got);
  return out;
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

absl::Status CheckpointErrno(int err, std::string_view what, std::string_view path) {
  const std::string message =
      fmt::format("checkpoint directory: {} {}: {}", what, path, std::strerror(err));
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view name, std::string_view bytes) {
  DATAECHO_ASSIGN_OR_RETURN(uint64_t header_size, CheckpointHeaderSize(name, bytes));
  DATAECHO_ASSIGN_OR_RETURN(
      CheckpointHeader h,
      ParseCheckpointHeader(name, bytes.substr(0, std::min<uint64_t>(header_size, bytes.size()))));
  if (h.file_bytes != bytes.size()) {
    return Damaged(name, fmt::format("its header declares {} bytes, the file has {} (torn write?)",
                                     h.file_bytes, bytes.size()));
  }
  const auto stored = static_cast<uint32_t>(GetLe(bytes, bytes.size() - 4, 4));
  if (const uint32_t crc = Crc32c(bytes.data(), bytes.size() - 4); crc != stored) {
    return Damaged(name,
                   fmt::format("CRC-32C {:08x}, the bytes give {:08x} (corrupt)", stored, crc));
  }
  Checkpoint out;
  out.path = std::string(name);
  out.step = h.step;
  uint64_t at = h.header_bytes;
  for (size_t i = 0; i < h.names.size(); ++i) {
    out.sections.emplace_back(std::move(h.names[i]), std::string(bytes.substr(at, h.sizes[i])));
    at += h.sizes[i];
  }
  return out;
}

absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused).
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return Damaged(path, fmt::format("cannot open it: {}", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return CheckpointErrno(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) return Damaged(path, "not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  uint64_t want = kCheckpointFixedHeader;
  std::string header;
  for (;;) {  // the fixed part, then the section table: the size the header says
    DATAECHO_ASSIGN_OR_RETURN(header, ReadAt(fd.get(), 0, std::min(want, size), path));
    DATAECHO_ASSIGN_OR_RETURN(uint64_t need, CheckpointHeaderSize(path, header));
    if (need <= header.size() || header.size() == size) break;
    want = need;
  }
  DATAECHO_ASSIGN_OR_RETURN(CheckpointHeader h, ParseCheckpointHeader(path, header));
  if (h.file_bytes != size) {
    return Damaged(path, fmt::format("its header declares {} bytes, the file has {} (torn write?)",
                                     h.file_bytes, size));
  }
  DATAECHO_ASSIGN_OR_RETURN(std::string bytes, ReadAt(fd.get(), 0, size, path));
  if (bytes.size() != size) {
    return Damaged(path, fmt::format("{} bytes read of {} (it shrank)", bytes.size(), size));
  }
  return ParseCheckpoint(path, bytes);
}

void EmitCheckpoint(int64_t step, const std::vector<CheckpointSection>& sections,
                    absl::FunctionRef<bool(std::string_view)> put) {
  const std::string header = EncodeCheckpointHeader(step, sections);
  if (!put(header)) return;
  uint32_t crc = Crc32c(header.data(), header.size());
  for (const CheckpointSection& s : sections) {
    for (absl::string_view chunk : s.bytes.Chunks()) {
      if (!put(std::string_view(chunk.data(), chunk.size()))) return;
      crc = Crc32cExtend(crc, chunk.data(), chunk.size());
    }
  }
  std::string trailer;
  PutLe(trailer, crc, 4);
  put(trailer);
}

absl::Status WriteCheckpointFile(const std::string& temp_path, const std::string& final_path,
                                 int64_t step, const std::vector<CheckpointSection>& sections) {
  Fd fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return CheckpointErrno(errno, "cannot create", temp_path);
  int err = 0;
  EmitCheckpoint(step, sections, [&](std::string_view bytes) {
    err = WriteAll(fd.get(), bytes);
    return err == 0;
  });
  const char* failed = err != 0 ? "cannot write" : nullptr;
  if (failed == nullptr && ::fsync(fd.get()) != 0) failed = "cannot fsync";
  if (failed == nullptr && ::close(fd.release()) != 0) failed = "cannot close";
  if (failed == nullptr && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    failed = "cannot rename it to its name:";
  }
  if (failed != nullptr) {
    absl::Status s = CheckpointErrno(err != 0 ? err : errno, failed, temp_path);
    ::unlink(temp_path.c_str());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace dataecho::internal
