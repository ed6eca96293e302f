// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// posix_file.h (internal): the POSIX file calls the library's file code shares
// (the local object store, the checkpoint directory): a descriptor closed at
// scope exit, and reads and writes that go on after EINTR and short
// transfers. They return errno values, not statuses: each caller words its
// errors (and picks their codes) for what it was doing.
//
//   internal::Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
//   size_t got = 0;
//   if (int err = internal::PreadFully(fd.get(), buf, n, offset, &got); err != 0) ...
//
// Thread safety: Fd is a plain value; the functions are as thread-safe as the
// calls on the descriptor they make (pread: any number at once).
#ifndef DATAECHO_SRC_INTERNAL_POSIX_FILE_H_
#define DATAECHO_SRC_INTERNAL_POSIX_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace dataecho::internal {

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Writes all of `bytes` to `fd`: 0, or the errno of the failed write (EIO for
// a write that wrote nothing).
int WriteAll(int fd, std::string_view bytes);

// Reads `n` bytes at `offset` of `fd` into `dst`; *done is what was read,
// fewer than `n` only at the end of the file. 0, or the errno of the failed
// read (*done then says how far it got).
int PreadFully(int fd, void* dst, size_t n, uint64_t offset, size_t* done);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_POSIX_FILE_H_
