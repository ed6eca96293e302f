// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/checkpoint_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "dataecho/crc32c.h"
#include "fmt/format.h"

namespace trainer {
namespace {

constexpr std::string_view kMagic = "DETK";
constexpr size_t kHeaderSize = 4 + 4 + 8 + 8;
constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".dtc";
constexpr std::string_view kTempPrefix = ".ckpt-";

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLe(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  return v;
}

absl::Status Errno(std::string_view what, const std::string& path) {
  return absl::UnavailableError(
      fmt::format("checkpoint: {} {}: {}", what, path, std::strerror(errno)));
}

// Writes all of `bytes` to `fd`.
bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Writes the checkpoint file of `step` around `payload`'s chunks: the
// header, each chunk as it is, and the CRC-32C of them all.
bool WriteFileChunks(int fd, int64_t step, const absl::Cord& payload) {
  std::string header(kMagic);
  PutLe(header, kCheckpointFileVersion, 4);
  PutLe(header, static_cast<uint64_t>(step), 8);
  PutLe(header, payload.size(), 8);
  if (!WriteAll(fd, header)) return false;
  uint32_t crc = dataecho::Crc32c(header);
  for (absl::string_view chunk : payload.Chunks()) {
    if (!WriteAll(fd, std::string_view(chunk.data(), chunk.size()))) return false;
    crc = dataecho::Crc32cExtend(crc, chunk.data(), chunk.size());
  }
  std::string trailer;
  PutLe(trailer, crc, 4);
  return WriteAll(fd, trailer);
}

// The step of a checkpoint's file name, or -1 for another name.
int64_t StepOf(std::string_view name) {
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return -1;
  }
  const std::string_view digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 18) return -1;
  int64_t step = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    step = step * 10 + (c - '0');
  }
  return step;
}

// (step, name) of DIR's checkpoints, newest first; the temporary files apart.
struct Listing {
  std::vector<std::pair<int64_t, std::string>> checkpoints;
  std::vector<std::string> temporaries;
};
absl::StatusOr<Listing> List(const std::string& dir) {
  Listing out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Errno("cannot list", dir);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (const int64_t step = StepOf(name); step >= 0) {
      out.checkpoints.emplace_back(step, std::string(name));
    } else if (name.starts_with(kTempPrefix)) {
      out.temporaries.emplace_back(name);
    }
  }
  ::closedir(d);
  std::sort(out.checkpoints.begin(), out.checkpoints.end(), std::greater<>());
  return out;
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("cannot fsync directory", dir);
  return absl::OkStatus();
}

}  // namespace

std::string CheckpointPath(const std::string& dir, int64_t step) {
  return fmt::format("{}/{}{:012d}{}", dir, kPrefix, step, kSuffix);
}

std::string EncodeCheckpointFile(int64_t step, std::string_view payload) {
  std::string out(kMagic);
  PutLe(out, kCheckpointFileVersion, 4);
  PutLe(out, static_cast<uint64_t>(step), 8);
  PutLe(out, payload.size(), 8);
  out.append(payload);
  PutLe(out, dataecho::Crc32c(out), 4);
  return out;
}

absl::StatusOr<CheckpointFile> ParseCheckpointFile(std::string_view name, std::string_view bytes) {
  auto damaged = [&](std::string_view why) {
    return absl::DataLossError(fmt::format("checkpoint {}: {}", name, why));
  };
  if (bytes.size() < kHeaderSize + 4) {
    return damaged(fmt::format("{} bytes, shorter than a header (torn write?)", bytes.size()));
  }
  if (bytes.substr(0, 4) != kMagic) return damaged("not a trainer checkpoint (bad magic)");
  const uint64_t version = GetLe(bytes, 4, 4);
  if (version != kCheckpointFileVersion) {
    return damaged(
        fmt::format("format version {}, this program reads {}", version, kCheckpointFileVersion));
  }
  const uint64_t size = GetLe(bytes, 16, 8);
  if (size != bytes.size() - kHeaderSize - 4) {
    return damaged(fmt::format("{} bytes of payload announced, {} present (torn write?)", size,
                               bytes.size() - kHeaderSize - 4));
  }
  const uint32_t stored = static_cast<uint32_t>(GetLe(bytes, bytes.size() - 4, 4));
  const uint32_t crc = dataecho::Crc32c(bytes.substr(0, bytes.size() - 4));
  if (stored != crc) {
    return damaged(fmt::format("CRC-32C {:08x}, the bytes give {:08x} (corrupt)", stored, crc));
  }
  CheckpointFile out;
  out.path = std::string(name);
  out.step = static_cast<int64_t>(GetLe(bytes, 8, 8));
  out.payload = std::string(bytes.substr(kHeaderSize, size));
  return out;
}

absl::Status WriteCheckpointFile(const std::string& dir, int64_t step, std::string_view payload,
                                 int keep) {
  // The payload as one chunk of a Cord that refers to it (not a copy).
  const absl::Cord chunk =
      absl::MakeCordFromExternal(absl::string_view(payload.data(), payload.size()), [] {});
  return WriteCheckpointFileChunks(dir, step, chunk, keep);
}

absl::Status WriteCheckpointFileChunks(const std::string& dir, int64_t step,
                                       const absl::Cord& payload, int keep) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        fmt::format("checkpoint: cannot create directory {}: {}", dir, ec.message()));
  }
  const std::string final_path = CheckpointPath(dir, step);
  const std::string temp_path =
      fmt::format("{}/{}{:012d}.tmp-{}", dir, kTempPrefix, step, ::getpid());
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp_path);
  const bool written = WriteFileChunks(fd, step, payload);
  if (!written || ::fsync(fd) != 0) {
    absl::Status s = Errno(written ? "cannot fsync" : "cannot write", temp_path);
    ::close(fd);
    ::unlink(temp_path.c_str());
    return s;
  }
  if (::close(fd) != 0) {
    absl::Status s = Errno("cannot close", temp_path);
    ::unlink(temp_path.c_str());
    return s;
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    absl::Status s = Errno("cannot rename to " + final_path + ":", temp_path);
    ::unlink(temp_path.c_str());
    return s;
  }
  if (absl::Status s = SyncDirectory(dir); !s.ok()) return s;
  // The newest `keep` up to this step stay; older ones go, and so do those of
  // later steps (damaged ones a resume skipped: the run went on from before
  // them), and temporary files of earlier (killed) writers.
  absl::StatusOr<Listing> listing = List(dir);
  if (!listing.ok()) return listing.status();
  int kept = 0;
  for (const auto& [other, name] : listing->checkpoints) {
    if (other <= step && kept < std::max(keep, 1)) {
      ++kept;
      continue;
    }
    ::unlink(fmt::format("{}/{}", dir, name).c_str());
  }
  for (const std::string& name : listing->temporaries) {
    ::unlink(fmt::format("{}/{}", dir, name).c_str());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CheckpointFile>> ReadNewestCheckpoint(
    const std::string& dir, const std::function<void(std::string_view)>& warn) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  absl::StatusOr<Listing> listing = List(dir);
  if (!listing.ok()) return listing.status();
  std::string reasons;
  for (const auto& [step, name] : listing->checkpoints) {
    const std::string path = fmt::format("{}/{}", dir, name);
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    absl::StatusOr<CheckpointFile> file =
        in ? ParseCheckpointFile(path, bytes.str())
           : absl::DataLossError(fmt::format("checkpoint {}: cannot read it", path));
    if (file.ok() && file->step != step) {
      file = absl::DataLossError(
          fmt::format("checkpoint {}: holds step {}, its name says {}", path, file->step, step));
    }
    if (file.ok()) return std::optional<CheckpointFile>(*std::move(file));
    if (warn) warn(fmt::format("{}; using the one before", std::string(file.status().message())));
    reasons +=
        fmt::format("{}{}", reasons.empty() ? "" : "; ", std::string(file.status().message()));
  }
  if (listing->checkpoints.empty()) return std::nullopt;
  return absl::DataLossError(
      fmt::format("no complete checkpoint in {}: every one is damaged ({})", dir, reasons));
}

}  // namespace trainer
