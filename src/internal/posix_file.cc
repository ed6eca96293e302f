// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "internal/posix_file.h"

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace dataecho::internal {

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

int PreadFully(int fd, void* dst, size_t n, uint64_t offset, size_t* done) {
  auto* out = static_cast<char*>(dst);
  *done = 0;
  while (*done < n) {
    const ssize_t r = ::pread(fd, out + *done, n - *done, static_cast<off_t>(offset + *done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) break;
    *done += static_cast<size_t>(r);
  }
  return 0;
}

}  // namespace dataecho::internal
