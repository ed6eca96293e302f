// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/local_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "dataecho/status_macros.h"
#include "dataecho/text.h"
#include "fmt/format.h"
#include "internal/posix_file.h"
#include "storage/local_glob.h"
#include "storage/uri.h"

namespace dataecho {
namespace {

std::atomic<int64_t> directories_read{0};  // internal::LocalDirectoriesRead()

absl::Status ErrnoStatus(int err, std::string_view what, std::string_view path) {
  std::string msg = fmt::format("{} {}: {}", what, TerminalSafe(path), strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: return absl::NotFoundError(msg);
    case EACCES:
    case EPERM: return absl::PermissionDeniedError(msg);
    case EISDIR:
    case ENAMETOOLONG:
    case EINVAL: return absl::InvalidArgumentError(msg);
    case ELOOP:  // the path exists but cannot be resolved as things are
      return absl::FailedPreconditionError(msg + " (a symbolic link loop)");
    default: return absl::UnknownError(msg);
  }
}

std::string VersionOf(const struct stat& st) {
  return fmt::format("{}.{:09}-{}-{}", static_cast<int64_t>(st.st_mtim.tv_sec),
                     static_cast<int64_t>(st.st_mtim.tv_nsec), static_cast<uint64_t>(st.st_ino),
                     static_cast<uint64_t>(st.st_size));
}

const char* FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A regular file whose size says 0 but that has bytes (/proc, /sys): its size
// cannot be trusted, so it is refused rather than read as empty. `fd` is open
// on it; -1 to open `path` for the check.
absl::Status CheckSizeZeroIsEmpty(int fd, const std::string& path) {
  int own = -1;
  if (fd < 0) {
    own = fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
  }
  char c;
  ssize_t r;
  do {
    r = pread(fd, &c, 1, 0);
  } while (r < 0 && errno == EINTR);
  if (own >= 0) close(own);
  if (r > 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: reports a size of 0 bytes but has data (a /proc or /sys file?); its size cannot be "
        "trusted, copy it to a regular file first",
        TerminalSafe(path)));
  }
  return absl::OkStatus();
}

// The object `st` describes, if it is one dataecho can read: a regular file
// (a directory, pipe, device or socket has no size to read to; a pipe would
// read as empty).
absl::StatusOr<ObjectInfo> InfoOf(std::string_view uri, const std::string& path,
                                  const struct stat& st, int fd = -1) {
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: is a directory, not a file", TerminalSafe(path)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: is {}, not a regular file; dataecho reads regular files only (their "
                    "size is what a read is checked against): copy it to a file first",
                    TerminalSafe(path), FileKind(st.st_mode)));
  }
  if (st.st_size == 0) DATAECHO_RETURN_IF_ERROR(CheckSizeZeroIsEmpty(fd, path));
  ObjectInfo info;
  info.uri = std::string(uri);
  info.size = static_cast<uint64_t>(st.st_size);
  info.version = VersionOf(st);
  return info;
}

// Reads `n` bytes at `offset`, fewer only at end of file.
absl::StatusOr<size_t> PreadFully(int fd, uint8_t* dst, size_t n, uint64_t offset,
                                  const std::string& path) {
  size_t done = 0;
  if (const int err = internal::PreadFully(fd, dst, n, offset, &done); err != 0) {
    return ErrnoStatus(err, fmt::format("read at offset {} of", offset + done), path);
  }
  return done;
}

class LocalReader : public ObjectReader {
 public:
  LocalReader(int fd, std::string path, ObjectInfo info, struct stat pinned, uint64_t offset,
              uint64_t end, size_t read_ahead)
      : fd_(fd),
        path_(std::move(path)),
        info_(std::move(info)),
        pinned_(pinned),
        offset_(offset),
        end_(end),
        read_ahead_(std::max<size_t>(read_ahead, 4096)) {
    posix_fadvise(fd_, static_cast<off_t>(offset_), 0, POSIX_FADV_SEQUENTIAL);
  }
  ~LocalReader() override { close(fd_); }

  absl::StatusOr<size_t> Read(absl::Span<uint8_t> dst) override {
    if (cancelled_.load(std::memory_order_relaxed)) {
      return absl::CancelledError(fmt::format("read of {} cancelled", TerminalSafe(path_)));
    }
    size_t total = 0;
    while (total < dst.size() && offset_ < end_) {
      if (buf_pos_ < buf_len_) {
        size_t n = std::min(buf_len_ - buf_pos_, dst.size() - total);
        std::memcpy(dst.data() + total, buffer_.get() + buf_pos_, n);
        buf_pos_ += n;
        total += n;
        offset_ += n;
        continue;
      }
      size_t want = static_cast<size_t>(std::min<uint64_t>(read_ahead_, end_ - offset_));
      size_t room = dst.size() - total;
      uint8_t* target;
      if (room >= want) {
        target = dst.data() + total;  // large read: straight into the caller's memory
      } else {
        // Never larger than the rest of the range: a reader of a small file
        // (or a short range) holds a small buffer, not read_ahead's 8 MiB.
        // `want` only shrinks from here on, so the first size serves all.
        if (!buffer_) buffer_.reset(new uint8_t[want]);
        target = buffer_.get();
      }
      DATAECHO_RETURN_IF_ERROR(CheckUnchanged());
      DATAECHO_ASSIGN_OR_RETURN(const size_t got, PreadFully(fd_, target, want, offset_, path_));
      if (got < want) {
        return absl::FailedPreconditionError(
            fmt::format("{}: file shrank while being read (end at offset {}, expected {})",
                        TerminalSafe(path_), offset_ + got, info_.size));
      }
      uint64_t next = offset_ + want;
      if (next < end_) {
        posix_fadvise(fd_, static_cast<off_t>(next),
                      static_cast<off_t>(std::min<uint64_t>(read_ahead_, end_ - next)),
                      POSIX_FADV_WILLNEED);
      }
      if (target == buffer_.get()) {
        buf_len_ = want;
        buf_pos_ = 0;
      } else {
        total += want;
        offset_ += want;
      }
    }
    return total;
  }

  uint64_t offset() const override { return offset_; }
  const ObjectInfo& info() const override { return info_; }
  void Cancel() override { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  absl::Status CheckUnchanged() {
    struct stat st;
    if (fstat(fd_, &st) != 0) return ErrnoStatus(errno, "stat", path_);
    if (st.st_size != pinned_.st_size || st.st_mtim.tv_sec != pinned_.st_mtim.tv_sec ||
        st.st_mtim.tv_nsec != pinned_.st_mtim.tv_nsec) {
      return absl::FailedPreconditionError(
          fmt::format("{}: file changed while being read (at offset {}; version {} is now {})",
                      TerminalSafe(path_), offset_, info_.version, VersionOf(st)));
    }
    return absl::OkStatus();
  }

  const int fd_;
  const std::string path_;
  const ObjectInfo info_;
  const struct stat pinned_;
  uint64_t offset_;
  const uint64_t end_;
  const size_t read_ahead_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t buf_pos_ = 0;
  size_t buf_len_ = 0;
  std::atomic<bool> cancelled_{false};
};

class LocalStore : public ObjectStore {
 public:
  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override {
    DATAECHO_ASSIGN_OR_RETURN(const std::string path, internal::LocalPath(uri));
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    return InfoOf(uri, path, st);
  }

  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset,
                                   uint64_t length) override {
    DATAECHO_ASSIGN_OR_RETURN(const std::string path, internal::LocalPath(uri));
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO: no wait
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    struct stat st;
    absl::Status checked =
        fstat(fd, &st) == 0 ? InfoOf(uri, path, st, fd).status() : ErrnoStatus(errno, "stat", path);
    if (!checked.ok()) {
      close(fd);
      return checked;
    }
    uint64_t size = static_cast<uint64_t>(st.st_size);
    uint64_t begin = std::min(offset, size);
    size_t n = static_cast<size_t>(std::min(length, size - begin));
    MutableBuffer mb(n);
    absl::StatusOr<size_t> got = PreadFully(fd, mb.data(), n, begin, path);
    close(fd);
    if (!got.ok()) return got.status();
    mb.Truncate(*got);
    return std::move(mb).Freeze();
  }

  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions& options) override {
    DATAECHO_ASSIGN_OR_RETURN(std::string path, internal::LocalPath(uri));
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO: no wait
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    struct stat st;
    absl::StatusOr<ObjectInfo> info =
        fstat(fd, &st) == 0 ? InfoOf(uri, path, st, fd) : ErrnoStatus(errno, "stat", path);
    if (!info.ok()) {
      close(fd);
      return info.status();
    }
    uint64_t begin = std::min(options.offset, info->size);
    uint64_t end = begin + std::min(options.length, info->size - begin);
    return std::make_unique<LocalReader>(fd, std::move(path), *std::move(info), st, begin, end,
                                         options.read_ahead);
  }

  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) override {
    DATAECHO_ASSIGN_OR_RETURN(const std::string path_prefix, internal::LocalPath(prefix));
    // The URI text before the path part, kept on every listed URI.
    std::string uri_head(prefix.substr(0, prefix.size() - path_prefix.size()));
    size_t slash = path_prefix.rfind('/');
    std::string dir = slash == std::string::npos ? "" : path_prefix.substr(0, slash + 1);
    std::string base = path_prefix.substr(dir.size());
    namespace fs = std::filesystem;
    std::vector<ObjectInfo> out;
    std::error_code ec;
    fs::directory_iterator top(dir.empty() ? fs::path(".") : fs::path(dir), ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
        return out;  // nothing under this prefix
      }
      return ErrnoStatus(ec.value(), "list", dir.empty() ? "." : dir);
    }
    directories_read.fetch_add(1, std::memory_order_relaxed);
    auto add = [&](const fs::path& p, const std::string& rel) -> absl::Status {
      struct stat st;
      if (stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return absl::OkStatus();
      std::string uri = uri_head + dir + rel;
      absl::StatusOr<ObjectInfo> info = InfoOf(uri, p.string(), st);
      if (info.ok()) out.push_back(*std::move(info));
      return absl::OkStatus();
    };
    for (const fs::directory_entry& entry : top) {
      std::string name = entry.path().filename().string();
      if (!name.starts_with(base)) continue;
      if (entry.is_directory(ec)) {
        fs::recursive_directory_iterator it(entry.path(), ec), end;
        if (ec) return ErrnoStatus(ec.value(), "list", entry.path().string());
        directories_read.fetch_add(1, std::memory_order_relaxed);
        for (; it != end; it.increment(ec)) {
          if (ec) return ErrnoStatus(ec.value(), "list", entry.path().string());
          if (it->is_directory(ec)) {  // the iterator reads it next
            directories_read.fetch_add(1, std::memory_order_relaxed);
            continue;
          }
          std::string rel = name + "/" + fs::relative(it->path(), entry.path()).string();
          DATAECHO_RETURN_IF_ERROR(add(it->path(), rel));
        }
      } else {
        DATAECHO_RETURN_IF_ERROR(add(entry.path(), name));
      }
    }
    std::sort(out.begin(), out.end(),
              [](const ObjectInfo& a, const ObjectInfo& b) { return a.uri < b.uri; });
    return out;
  }
};

// Calls `fn` with the name of every entry of `dir` ("" = the working
// directory) but "." and "..". A missing directory (or a file) has none.
template <typename F>
absl::Status ForEachEntry(const std::string& dir, F&& fn) {
  const std::string shown = dir.empty() ? "." : dir;
  DIR* d = opendir(shown.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return absl::OkStatus();
    return ErrnoStatus(errno, "list", shown);
  }
  directories_read.fetch_add(1, std::memory_order_relaxed);
  int err = 0;
  while (true) {
    errno = 0;
    const dirent* e = readdir(d);
    if (e == nullptr) {
      err = errno;
      break;
    }
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") fn(name);
  }
  closedir(d);
  return err == 0 ? absl::OkStatus() : ErrnoStatus(err, "list", shown);
}

}  // namespace

std::unique_ptr<ObjectStore> NewLocalStore() { return std::make_unique<LocalStore>(); }

namespace internal {

int64_t LocalDirectoriesRead() { return directories_read.load(std::memory_order_relaxed); }

absl::StatusOr<std::vector<std::string>> ExpandLocalGlob(std::string_view pattern) {
  DATAECHO_ASSIGN_OR_RETURN(const std::string path, LocalPath(pattern));
  const std::string head(pattern.substr(0, pattern.size() - path.size()));  // "file://", ...
  // The literal directory before the first glob character, then the
  // components from there on, one directory level each.
  const size_t glob = GlobStart(path);
  const size_t slash = path.rfind('/', glob == std::string::npos ? path.size() : glob);
  const size_t cut = slash == std::string::npos ? 0 : slash + 1;
  std::vector<std::string> reached = {GlobUnescape(std::string_view(path).substr(0, cut))};
  std::vector<std::string> parts;
  for (size_t from = cut;;) {
    const size_t end = std::min(path.find('/', from), path.size());
    parts.push_back(path.substr(from, end - from));
    if (end == path.size()) break;
    from = end + 1;
  }
  for (size_t i = 0; i < parts.size() && !reached.empty(); ++i) {
    const std::string& part = parts[i];
    const char* tail = i + 1 < parts.size() ? "/" : "";
    std::vector<std::string> next;
    if (GlobStart(part) == std::string::npos) {
      for (const std::string& dir : reached) next.push_back(dir + GlobUnescape(part) + tail);
    } else {
      for (const std::string& dir : reached) {
        DATAECHO_RETURN_IF_ERROR(ForEachEntry(dir, [&](std::string_view name) {
          if (fnmatch(part.c_str(), std::string(name).c_str(), FNM_PATHNAME) == 0) {
            next.push_back(dir + std::string(name) + tail);
          }
        }));
      }
    }
    reached = std::move(next);
  }
  std::vector<std::string> out;
  for (const std::string& p : reached) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // a literal part, a dangling link
      return ErrnoStatus(errno, "stat", p);
    }
    if (S_ISREG(st.st_mode)) out.push_back(head + p);
  }
  return out;
}

}  // namespace internal

}  // namespace dataecho
