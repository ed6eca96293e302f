// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/checkpoint_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/crc32c.h"
#include "dataecho/status_macros.h"
#include "dataecho/trace.h"
#include "fmt/format.h"
#include "internal/checkpoint_file.h"

namespace dataecho {
namespace {

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".dtc";
constexpr std::string_view kTempPrefix = ".ckpt-";
constexpr std::string_view kLockName = "LOCK";

// An error of a call on `path`, its code from errno: PERMISSION_DENIED for
// EACCES/EPERM/EROFS, UNAVAILABLE otherwise (ENOSPC, EIO: a write may succeed
// later).
absl::Status Errno(int err, std::string_view what, std::string_view path) {
  const std::string message =
      fmt::format("checkpoint directory: {} {}: {}", what, path, std::strerror(err));
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads exactly `n` bytes at `offset` (fewer only at the end of the file).
absl::StatusOr<std::string> ReadAt(int fd, uint64_t offset, uint64_t n, std::string_view path) {
  std::string out(n, '\0');
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno(errno, "cannot read", path);
    if (r == 0) break;
    got += static_cast<uint64_t>(r);
  }
  out.resize(got);
  return out;
}

// The step of a checkpoint's file name, or -1 for another name.
int64_t StepOf(std::string_view name) {
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return -1;
  }
  const std::string_view digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.size() > 18) return -1;
  int64_t step = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    step = step * 10 + (c - '0');
  }
  return step;
}

// DIR's checkpoints (step, name), newest first, and its temporary files.
struct Listing {
  std::vector<std::pair<int64_t, std::string>> checkpoints;
  std::vector<std::string> temporaries;
};
absl::StatusOr<Listing> List(const std::string& dir) {
  Listing out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Errno(errno, "cannot list", dir);
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
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return Errno(errno, "cannot open", dir);
  if (::fsync(fd.get()) != 0) return Errno(errno, "cannot fsync", dir);
  return absl::OkStatus();
}

// OK if `path` is a directory or does not exist (*exists says which).
absl::Status CheckIsDirectory(const std::string& path, bool* exists) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Errno(errno, "cannot stat", path);
    *exists = false;
    return absl::OkStatus();
  }
  *exists = true;
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        fmt::format("checkpoint directory {} is not a directory", path));
  }
  return absl::OkStatus();
}

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "unknown-host";
  return host;
}

// Reads one file of DIR as a checkpoint: regular files only, its header
// checked before its body, the length it declares against the file's size.
absl::StatusOr<Checkpoint> ReadFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused).
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    return absl::DataLossError(
        fmt::format("checkpoint {}: cannot open it: {}", path, std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::DataLossError(fmt::format("checkpoint {}: not a regular file", path));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t want = internal::kCheckpointFixedHeader;
  std::string header;
  for (;;) {  // the fixed part, then the section table: the size the header says
    DATAECHO_ASSIGN_OR_RETURN(header, ReadAt(fd.get(), 0, std::min(want, size), path));
    DATAECHO_ASSIGN_OR_RETURN(uint64_t need, internal::CheckpointHeaderSize(path, header));
    if (need <= header.size() || header.size() == size) break;
    want = need;
  }
  DATAECHO_ASSIGN_OR_RETURN(internal::CheckpointHeader h,
                            internal::ParseCheckpointHeader(path, header));
  if (h.file_bytes != size) {
    return absl::DataLossError(
        fmt::format("checkpoint {}: its header declares {} bytes, the file has {} (torn write?)",
                    path, h.file_bytes, size));
  }
  DATAECHO_ASSIGN_OR_RETURN(std::string bytes, ReadAt(fd.get(), 0, size, path));
  if (bytes.size() != size) {
    return absl::DataLossError(
        fmt::format("checkpoint {}: {} bytes read of {} (it shrank)", path, bytes.size(), size));
  }
  return CheckpointDir::Parse(path, bytes);
}

}  // namespace

// The thread of the background writes, started with the first one: a write
// handed to it costs a lock and a wake, not a thread's creation.
class CheckpointDir::Writer {
 public:
  Writer() : thread_([this] { Run(); }) {}
  ~Writer() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();  // after the write in flight, if any
  }

  // Hands `write` to the thread. REQUIRES: no write in flight (Wait() first).
  void Start(std::function<absl::Status()> write) {
    absl::MutexLock lock(&mu_);
    write_ = std::move(write);
    busy_ = true;
  }

  // Waits for the write in flight; its status (OK without one).
  absl::Status Wait() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](bool* busy) { return !*busy; }, &busy_));
    return std::exchange(status_, absl::OkStatus());
  }

 private:
  void Run() {
    SetTraceThreadName("checkpoint writer");
    absl::MutexLock lock(&mu_);
    while (true) {
      mu_.Await(absl::Condition(
          +[](Writer* w) { return w->stop_ || w->write_ != nullptr; }, this));
      if (write_ == nullptr) return;  // stopped, nothing left to write
      std::function<absl::Status()> write = std::exchange(write_, nullptr);
      mu_.Unlock();
      absl::Status status = write();
      mu_.Lock();
      status_ = std::move(status);
      busy_ = false;
    }
  }

  absl::Mutex mu_;
  std::function<absl::Status()> write_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the members above are
};

CheckpointDir::CheckpointDir(std::string path, CheckpointDirOptions options, int lock_fd)
    : path_(std::move(path)), options_(std::move(options)), lock_fd_(lock_fd) {}

CheckpointDir::~CheckpointDir() {
  if (absl::Status s = Flush(); !s.ok() && options_.warn) options_.warn(std::string(s.message()));
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

std::string CheckpointDir::FilePath(std::string_view dir, int64_t step) {
  return fmt::format("{}/{}{:012d}{}", dir, kPrefix, step, kSuffix);
}

absl::StatusOr<std::unique_ptr<CheckpointDir>> CheckpointDir::OpenForReading(
    std::string path, CheckpointDirOptions options) {
  if (path.empty()) return absl::InvalidArgumentError("checkpoint directory: empty path");
  bool exists = false;
  DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path, &exists));
  return std::unique_ptr<CheckpointDir>(new CheckpointDir(std::move(path), std::move(options), -1));
}

absl::StatusOr<std::unique_ptr<CheckpointDir>> CheckpointDir::OpenForWriting(
    std::string path, CheckpointDirOptions options) {
  if (path.empty()) return absl::InvalidArgumentError("checkpoint directory: empty path");
  if (options.keep < 1) {
    return absl::InvalidArgumentError(
        fmt::format("checkpoint directory: keep must be >= 1, got {}", options.keep));
  }
  bool exists = false;
  DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path, &exists));
  if (!exists) {
    // Each missing level, as `mkdir -p` (one that appears meanwhile is fine).
    for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
      const std::string part = path.substr(0, at);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
        return Errno(errno, "cannot create", part);
      }
      if (at == std::string::npos) break;
    }
    DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path, &exists));
  }
  // The lock: one writer per directory, held until this object goes.
  const std::string lock_path = fmt::format("{}/{}", path, kLockName);
  Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (lock.get() < 0) return Errno(errno, "cannot create its lock file", lock_path);
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return Errno(errno, "cannot lock", lock_path);
    absl::StatusOr<std::string> holder = ReadAt(lock.get(), 0, 512, lock_path);
    std::string who = holder.ok() ? *holder : std::string();
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    return absl::FailedPreconditionError(fmt::format(
        "checkpoint directory {} is in use by another writer ({}): a directory has one writer; "
        "give this run a --checkpoint_dir of its own",
        path, who.empty() ? "not named" : who));
  }
  const std::string me = fmt::format("host {} pid {} since {}", HostName(), ::getpid(),
                                     static_cast<int64_t>(std::time(nullptr)));
  if (::ftruncate(lock.get(), 0) != 0 || !WriteAll(lock.get(), me + "\n")) {
    return Errno(errno, "cannot write", lock_path);
  }
  // Can checkpoints be written? (A read-only directory whose LOCK exists
  // opens above; creating a file in it does not.)
  const std::string probe = fmt::format("{}/{}probe.tmp-{}", path, kTempPrefix, ::getpid());
  {
    Fd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return Errno(errno, "cannot write a file in", path);
  }
  ::unlink(probe.c_str());
  // Temporary files of earlier writers: each is gone (the lock is ours).
  absl::StatusOr<Listing> listing = List(path);
  if (!listing.ok()) return listing.status();
  for (const std::string& name : listing->temporaries) {
    const std::string stray = fmt::format("{}/{}", path, name);
    if (::unlink(stray.c_str()) == 0 && options.warn) {
      options.warn(fmt::format("removed {}, left by a writer that is gone", stray));
    }
  }
  return std::unique_ptr<CheckpointDir>(
      new CheckpointDir(std::move(path), std::move(options), lock.release()));
}

std::string CheckpointDir::Encode(int64_t step, const std::vector<CheckpointSection>& sections) {
  std::string out = internal::EncodeCheckpointHeader(step, sections);
  for (const CheckpointSection& s : sections) {
    for (absl::string_view chunk : s.bytes.Chunks()) out.append(chunk.data(), chunk.size());
  }
  const uint32_t crc = Crc32c(out.data(), out.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((crc >> (8 * i)) & 0xff);
  return out;
}

absl::StatusOr<Checkpoint> CheckpointDir::Parse(std::string_view name, std::string_view bytes) {
  DATAECHO_ASSIGN_OR_RETURN(uint64_t header_size, internal::CheckpointHeaderSize(name, bytes));
  DATAECHO_ASSIGN_OR_RETURN(
      internal::CheckpointHeader h,
      internal::ParseCheckpointHeader(
          name, bytes.substr(0, std::min<uint64_t>(header_size, bytes.size()))));
  if (h.file_bytes != bytes.size()) {
    return absl::DataLossError(
        fmt::format("checkpoint {}: its header declares {} bytes, the file has {} (torn write?)",
                    name, h.file_bytes, bytes.size()));
  }
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) {
    stored |= uint32_t{static_cast<uint8_t>(bytes[bytes.size() - 4 + i])} << (8 * i);
  }
  if (const uint32_t crc = Crc32c(bytes.data(), bytes.size() - 4); crc != stored) {
    return absl::DataLossError(fmt::format(
        "checkpoint {}: CRC-32C {:08x}, the bytes give {:08x} (corrupt)", name, stored, crc));
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

absl::StatusOr<std::optional<Checkpoint>> CheckpointDir::ReadNewest() const {
  bool exists = false;
  DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path_, &exists));
  if (!exists) return std::nullopt;
  DATAECHO_ASSIGN_OR_RETURN(Listing listing, List(path_));
  std::string reasons;
  for (const auto& [step, name] : listing.checkpoints) {
    const std::string file = fmt::format("{}/{}", path_, name);
    absl::StatusOr<Checkpoint> c = ReadFile(file);
    if (c.ok() && c->step != step) {
      c = absl::DataLossError(
          fmt::format("checkpoint {}: holds step {}, its name says {}", file, c->step, step));
    }
    if (c.ok()) return std::optional<Checkpoint>(*std::move(c));
    if (options_.warn) options_.warn(absl::StrCat(c.status().message(), "; using the one before"));
    absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", c.status().message());
  }
  if (listing.checkpoints.empty()) return std::nullopt;
  return absl::DataLossError(
      fmt::format("no complete checkpoint in {}: every one is damaged ({})", path_, reasons));
}

absl::Status CheckpointDir::Flush() {
  return writer_ == nullptr ? absl::OkStatus() : writer_->Wait();
}

absl::Status CheckpointDir::Write(int64_t step, std::vector<CheckpointSection> sections) {
  if (lock_fd_ < 0) {
    return absl::FailedPreconditionError(
        fmt::format("checkpoint directory {} was opened for reading", path_));
  }
  if (step < 0) {
    return absl::InvalidArgumentError(fmt::format("checkpoint: step must be >= 0, got {}", step));
  }
  DATAECHO_RETURN_IF_ERROR(Flush());
  auto write = [dir = path_, keep = options_.keep, step,
                sections = std::move(sections)]() -> absl::Status {
    TraceScope span("checkpoint write", "checkpoint");
    const std::string final_path = FilePath(dir, step);
    const std::string temp_path =
        fmt::format("{}/{}{:012d}.tmp-{}", dir, kTempPrefix, step, ::getpid());
    Fd fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return Errno(errno, "cannot create", temp_path);
    // The header, each section's chunks as they are, the CRC of them all.
    const std::string header = internal::EncodeCheckpointHeader(step, sections);
    bool ok = WriteAll(fd.get(), header);
    uint32_t crc = Crc32c(header.data(), header.size());
    for (const CheckpointSection& s : sections) {
      for (absl::string_view chunk : s.bytes.Chunks()) {
        if (!ok) break;
        ok = WriteAll(fd.get(), std::string_view(chunk.data(), chunk.size()));
        crc = Crc32cExtend(crc, chunk.data(), chunk.size());
      }
    }
    std::string trailer;
    for (int i = 0; i < 4; ++i) trailer += static_cast<char>((crc >> (8 * i)) & 0xff);
    if (ok) ok = WriteAll(fd.get(), trailer);
    const char* failed = !ok ? "cannot write" : ::fsync(fd.get()) != 0 ? "cannot fsync" : nullptr;
    if (failed == nullptr && ::close(fd.release()) != 0) failed = "cannot close";
    if (failed == nullptr && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
      failed = "cannot rename it to its name:";
    }
    if (failed != nullptr) {
      absl::Status s = Errno(errno, failed, temp_path);
      ::unlink(temp_path.c_str());
      return s;
    }
    DATAECHO_RETURN_IF_ERROR(SyncDirectory(dir));
    // The newest `keep` up to this step stay; older ones go, and so do those
    // of later steps (damaged ones a resume skipped: the run went on from
    // before them).
    DATAECHO_ASSIGN_OR_RETURN(Listing listing, List(dir));
    int kept = 0;
    for (const auto& [other, name] : listing.checkpoints) {
      if (other <= step && kept < keep) {
        ++kept;
        continue;
      }
      ::unlink(fmt::format("{}/{}", dir, name).c_str());
    }
    return absl::OkStatus();
  };
  if (!options_.background) return write();
  if (writer_ == nullptr) writer_ = std::make_unique<Writer>();
  writer_->Start(std::move(write));
  return absl::OkStatus();
}

}  // namespace dataecho
