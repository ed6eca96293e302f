// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// shard_set.h: the output shards of `dataecho convert`, written all or
// nothing.
//
// Each shard is written under a hidden temporary name next to its final one
// (".NAME.tmp-PID"); Commit() closes them all and renames each to its final
// name. Until then the final names are untouched, so a failed convert (bad
// input, a corrupt gzip stream mid-way, a full disk) leaves earlier shards as
// they were; a ShardSet destroyed without a successful Commit() removes its
// temporary files and the directories it created.
//
//   absl::StatusOr<std::unique_ptr<ShardSet>> set =
//       ShardSet::Create("/data/train", 4, ".tfrecord", {});
//   (*set)->Write(i % 4, payload);
//   absl::StatusOr<uint64_t> bytes = (*set)->Commit();  // file bytes of all shards
//
// Not thread-safe.
#ifndef DATAECHO_TOOLS_DATAECHO_SHARD_SET_H_
#define DATAECHO_TOOLS_DATAECHO_SHARD_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/formats/tfrecord.h"

namespace dataecho::tool {

// OK if this process may hold `files` more files open (with a reserve for
// its inputs and standard streams), raising its soft RLIMIT_NOFILE up to the
// hard limit when needed; else RESOURCE_EXHAUSTED naming `what` and the limit.
absl::Status EnsureOpenFileLimit(int64_t files, std::string_view what);

class ShardSet {
 public:
  // The final names are PREFIX-00000-of-0000N<suffix>. Creates the missing
  // directories of `prefix` (like mkdir -p), then a temporary file per shard.
  static absl::StatusOr<std::unique_ptr<ShardSet>> Create(const std::string& prefix, int64_t shards,
                                                          const std::string& suffix,
                                                          const TFRecordWriterOptions& options);
  ~ShardSet();

  absl::Status Write(size_t shard, std::string_view payload);
  // Closes every shard, renames each to its final name and returns the bytes
  // of the files written.
  absl::StatusOr<uint64_t> Commit();

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  ShardSet() = default;
  absl::Status CreateDirectories(const std::string& dir);

  std::vector<std::string> paths_;      // final names
  std::vector<std::string> temporary_;  // their temporary names
  std::vector<std::unique_ptr<TFRecordWriter>> writers_;
  std::vector<std::string> created_dirs_;  // by us, outermost first
  bool committed_ = false;
};

}  // namespace dataecho::tool

#endif  // DATAECHO_TOOLS_DATAECHO_SHARD_SET_H_
