// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "common/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "dataecho/text.h"
#include "fmt/format.h"

namespace dataecho::tools {

absl::StatusOr<OutputFile> OutputFile::Open(std::string_view flag, std::string path) {
  if (path.empty()) return OutputFile(std::move(path), -1, false);
  bool created = true;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    return absl::InvalidArgumentError(fmt::format("--{}={}: cannot write it: {}", flag,
                                                  TerminalSafe(path), std::strerror(errno)));
  }
  return OutputFile(std::move(path), fd, created);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      created_(std::exchange(other.created_, false)) {}

OutputFile::~OutputFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (created_) ::unlink(path_.c_str());
}

absl::Status OutputFile::Write(std::string_view text) {
  if (fd_ < 0) return absl::OkStatus();
  const int fd = std::exchange(fd_, -1);
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    return absl::ErrnoToStatus(err, fmt::format("{} {}", what, TerminalSafe(path_)));
  };
  if (::ftruncate(fd, 0) != 0) return fail("truncate");
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write");
    text.remove_prefix(static_cast<size_t>(n));
  }
  if (::close(fd) != 0)
    return absl::ErrnoToStatus(errno, fmt::format("close {}", TerminalSafe(path_)));
  return absl::OkStatus();
}

}  // namespace dataecho::tools
