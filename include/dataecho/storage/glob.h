// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/glob.h: turning file patterns into a sorted list of object URIs.
//
// A pattern is one of
//   - a glob: "gs://bucket/train-*.tfrecord", "/data/part-[0-9]?", where '*'
//     and '?' never match '/' and "[...]" is a character class (fnmatch(3)
//     with FNM_PATHNAME), matched against whole URIs. Glob characters count
//     only where a listing can expand them: in a local path and in the key of
//     gs:// and s3:// (not in the bucket). A '\' makes the next '*', '?',
//     '[', ']' or '\' literal ("/data/part\[1\]"); a glob that matches
//     nothing but names an existing object as written is that object;
//   - a prefix ending in '/': "s3://bucket/train/" (every object under it);
//   - an exact URI, which must exist. http(s):// URLs are always one object:
//     '?' starts their query string (a presigned URL), '[' an IPv6 host.
// Matching nothing is NOT_FOUND naming the pattern: an empty training set is
// almost always a typo. A local glob (plain path or file://) reads only the
// directories its pattern can reach, one level per component ("/usr/*.x"
// reads /usr alone), from the file system rather than through `store`'s
// List; gs:// and s3:// globs list their prefix through `store`.
//
//   auto store = dataecho::OpenObjectStore();
//   absl::StatusOr<std::vector<std::string>> files =
//       dataecho::ExpandUris(*store, "/data/train-*.tfrecord");  // or a vector of patterns
//
// Thread safety: the functions are thread-safe if the store is.
#ifndef DATAECHO_STORAGE_GLOB_H_
#define DATAECHO_STORAGE_GLOB_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/export.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

// True if `pattern` has an unescaped glob character ('*', '?' or '[') where
// globs count (see the file comment).
DATAECHO_EXPORT bool IsGlob(std::string_view pattern);

// True if `uri` matches the glob `pattern` (see the file comment).
DATAECHO_EXPORT bool GlobMatch(std::string_view pattern, std::string_view uri);

// The URIs `pattern` names, sorted.
DATAECHO_EXPORT absl::StatusOr<std::vector<std::string>> ExpandUris(ObjectStore& store,
                                                                    std::string_view pattern);

// The union of the patterns' URIs, sorted, each once.
DATAECHO_EXPORT absl::StatusOr<std::vector<std::string>> ExpandUris(
    ObjectStore& store, const std::vector<std::string>& patterns);

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_GLOB_H_
