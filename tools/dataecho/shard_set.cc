// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "shard_set.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "dataecho/storage/object_store.h"
#include "fmt/format.h"

namespace dataecho::tool {
namespace {

// Files a convert has open besides its shards: the standard streams, the two
// inputs (and what a remote store keeps open), with room to spare.
constexpr int64_t kReservedFiles = 32;

absl::Status ErrnoError(int err, std::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(err, fmt::format("{} {}", what, RedactUri(path)));
}

}  // namespace

absl::Status EnsureOpenFileLimit(int64_t files, std::string_view what) {
  const auto needed = static_cast<rlim_t>(files + kReservedFiles);
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return absl::OkStatus();  // cannot tell: try
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= needed) return absl::OkStatus();
  if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= needed) {
    rlimit raised = rl;
    raised.rlim_cur = needed;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(fmt::format(
      "{} needs {} open files ({} shards + {} for the inputs), above this process's "
      "limit of {} (ulimit -n; hard limit {}): write fewer shards or raise the limit",
      what, files + kReservedFiles, files, kReservedFiles, rl.rlim_cur,
      rl.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(rl.rlim_max)));
}

absl::Status ShardSet::CreateDirectories(const std::string& dir) {
  // Every proper prefix ending before a '/', then `dir` itself.
  for (size_t end = 1; end <= dir.size(); ++end) {
    if (end < dir.size() && dir[end] != '/') continue;
    const std::string path = dir.substr(0, end);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        return absl::FailedPreconditionError(
            fmt::format("{}: exists and is not a directory", RedactUri(path)));
      }
      continue;
    }
    if (errno != ENOENT) return ErrnoError(errno, "stat", path);
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST)
      return ErrnoError(errno, "create directory", path);
    created_dirs_.push_back(path);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ShardSet>> ShardSet::Create(const std::string& prefix,
                                                           int64_t shards,
                                                           const std::string& suffix,
                                                           const TFRecordWriterOptions& options) {
  std::unique_ptr<ShardSet> set(new ShardSet);
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash);
  if (!dir.empty()) {
    if (absl::Status s = set->CreateDirectories(dir); !s.ok()) return s;
  }
  const std::string pid = std::to_string(::getpid());
  for (int64_t s = 0; s < shards; ++s) {
    const std::string name = fmt::format("{}-{:05d}-of-{:05d}{}", prefix, s, shards, suffix);
    const size_t base = slash == std::string::npos ? 0 : slash + 1;
    set->paths_.push_back(name);
    set->temporary_.push_back(
        fmt::format("{}.{}.tmp-{}", name.substr(0, base), name.substr(base), pid));
    absl::StatusOr<std::unique_ptr<TFRecordWriter>> w =
        TFRecordWriter::Create(set->temporary_.back(), options);
    if (!w.ok()) {
      set->temporary_.pop_back();  // not created
      return w.status();
    }
    set->writers_.push_back(*std::move(w));
  }
  return set;
}

ShardSet::~ShardSet() {
  if (committed_) return;
  writers_.clear();  // closes the files
  for (const std::string& t : temporary_) ::unlink(t.c_str());
  for (auto d = created_dirs_.rbegin(); d != created_dirs_.rend(); ++d) ::rmdir(d->c_str());
}

absl::Status ShardSet::Write(size_t shard, std::string_view payload) {
  return writers_[shard]->Write(payload);
}

absl::StatusOr<uint64_t> ShardSet::Commit() {
  uint64_t bytes = 0;
  for (size_t s = 0; s < writers_.size(); ++s) {
    if (absl::Status st = writers_[s]->Close(); !st.ok()) return st;
    struct stat sb {};
    if (::stat(temporary_[s].c_str(), &sb) != 0) return ErrnoError(errno, "stat", temporary_[s]);
    bytes += static_cast<uint64_t>(sb.st_size);
  }
  for (size_t s = 0; s < writers_.size(); ++s) {
    if (std::rename(temporary_[s].c_str(), paths_[s].c_str()) != 0) {
      // The shards renamed so far are complete; the rest stay as they were.
      return ErrnoError(errno, "rename to", paths_[s]);
    }
  }
  committed_ = true;
  return bytes;
}

}  // namespace dataecho::tool
