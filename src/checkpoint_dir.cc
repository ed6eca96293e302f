// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/checkpoint_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/option_checks.h"
#include "dataecho/status_macros.h"
#include "dataecho/trace.h"
#include "fmt/format.h"
#include "internal/checkpoint_file.h"
#include "internal/posix_file.h"

namespace dataecho {
namespace {

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".dtc";
constexpr std::string_view kTempPrefix = ".ckpt-";
constexpr std::string_view kLockName = "LOCK";

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
  if (d == nullptr) return internal::CheckpointErrno(errno, "cannot list", dir);
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
  internal::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return internal::CheckpointErrno(errno, "cannot open", dir);
  if (::fsync(fd.get()) != 0) return internal::CheckpointErrno(errno, "cannot fsync", dir);
  return absl::OkStatus();
}

// OK if `path` is a directory or does not exist (*exists says which).
absl::Status CheckIsDirectory(const std::string& path, bool* exists) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return internal::CheckpointErrno(errno, "cannot stat", path);
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
  DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("checkpoint directory: keep", options.keep, 1));
  bool exists = false;
  DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path, &exists));
  if (!exists) {
    // Each missing level, as `mkdir -p` (one that appears meanwhile is fine).
    for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
      const std::string part = path.substr(0, at);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
        return internal::CheckpointErrno(errno, "cannot create", part);
      }
      if (at == std::string::npos) break;
    }
    DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path, &exists));
  }
  // The lock: one writer per directory, held until this object goes.
  const std::string lock_path = fmt::format("{}/{}", path, kLockName);
  internal::Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (lock.get() < 0) {
    return internal::CheckpointErrno(errno, "cannot create its lock file", lock_path);
  }
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return internal::CheckpointErrno(errno, "cannot lock", lock_path);
    std::string who(512, '\0');
    size_t got = 0;
    if (internal::PreadFully(lock.get(), who.data(), who.size(), 0, &got) != 0) got = 0;
    who.resize(got);
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    return absl::FailedPreconditionError(fmt::format(
        "checkpoint directory {} is in use by another writer ({}): a directory has one writer; "
        "give this run a --checkpoint_dir of its own",
        path, who.empty() ? "not named" : who));
  }
  const std::string me = fmt::format("host {} pid {} since {}", HostName(), ::getpid(),
                                     static_cast<int64_t>(std::time(nullptr)));
  const int err =
      ::ftruncate(lock.get(), 0) != 0 ? errno : internal::WriteAll(lock.get(), me + "\n");
  if (err != 0) return internal::CheckpointErrno(err, "cannot write", lock_path);
  // Can checkpoints be written? (A read-only directory whose LOCK exists
  // opens above; creating a file in it does not.)
  const std::string probe = fmt::format("{}/{}probe.tmp-{}", path, kTempPrefix, ::getpid());
  {
    internal::Fd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return internal::CheckpointErrno(errno, "cannot write a file in", path);
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
  std::string out;
  internal::EmitCheckpoint(step, sections, [&out](std::string_view bytes) {
    out.append(bytes);
    return true;
  });
  return out;
}

absl::StatusOr<Checkpoint> CheckpointDir::Parse(std::string_view name, std::string_view bytes) {
  return internal::ParseCheckpoint(name, bytes);
}

absl::StatusOr<std::optional<Checkpoint>> CheckpointDir::ReadNewest() const {
  bool exists = false;
  DATAECHO_RETURN_IF_ERROR(CheckIsDirectory(path_, &exists));
  if (!exists) return std::nullopt;
  DATAECHO_ASSIGN_OR_RETURN(Listing listing, List(path_));
  std::string reasons;
  for (const auto& [step, name] : listing.checkpoints) {
    const std::string file = fmt::format("{}/{}", path_, name);
    absl::StatusOr<Checkpoint> c = internal::ReadCheckpointFile(file);
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
  DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("checkpoint: step", step, 0));
  DATAECHO_RETURN_IF_ERROR(Flush());
  auto write = [dir = path_, keep = options_.keep, step,
                sections = std::move(sections)]() -> absl::Status {
    TraceScope span("checkpoint write", "checkpoint");
    const std::string temp_path =
        fmt::format("{}/{}{:012d}.tmp-{}", dir, kTempPrefix, step, ::getpid());
    DATAECHO_RETURN_IF_ERROR(
        internal::WriteCheckpointFile(temp_path, FilePath(dir, step), step, sections));
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
