// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/local_glob.h: a glob over local files, one directory level at a
// time. Internal: ExpandUris (glob.h) expands a glob in a plain path or
// file:// URI here.
//
// ObjectStore::List lists everything below a prefix, so a glob expanded from
// a listing reads every directory under its literal prefix. But '*', '?' and
// "[...]" never match '/': "/usr/*.x" can only name files in /usr, so only
// /usr is read. Each component of the pattern is matched (fnmatch(3)) against
// the entries of the directories the components before it reached ("." and
// ".." never match); literal components are taken as written, without
// reading; the result is the regular files among the paths reached (symbolic
// links followed).
//
//   absl::StatusOr<std::vector<std::string>> files =
//       dataecho::internal::ExpandLocalGlob("/data/*/train-*.tfrecord");
//
// Thread safety: thread-safe.
#ifndef DATAECHO_SRC_STORAGE_LOCAL_GLOB_H_
#define DATAECHO_SRC_STORAGE_LOCAL_GLOB_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace dataecho::internal {

// The regular files the glob `pattern` (a plain path or file:// URI) names,
// in the pattern's URI form, unsorted; none is not an error. A directory the
// pattern reaches that cannot be read (other than missing) is an error naming
// it, as is a match that cannot be stat'ed (a symbolic link loop:
// FAILED_PRECONDITION).
absl::StatusOr<std::vector<std::string>> ExpandLocalGlob(std::string_view pattern);

// Directories the local store has read (listed, or walked for a glob) in this
// process: a test hook.
int64_t LocalDirectoriesRead();

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_LOCAL_GLOB_H_
