// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/glob.h"

#include <fnmatch.h>

#include <algorithm>

#include "absl/status/status.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "storage/local_glob.h"
#include "storage/uri.h"

namespace dataecho {

bool IsGlob(std::string_view pattern) {
  return internal::GlobStart(pattern) != std::string_view::npos;
}

bool GlobMatch(std::string_view pattern, std::string_view uri) {
  std::string p(pattern), u(uri);
  return fnmatch(p.c_str(), u.c_str(), FNM_PATHNAME) == 0;
}

absl::StatusOr<std::vector<std::string>> ExpandUris(ObjectStore& store, std::string_view pattern) {
  std::vector<std::string> out;
  if (pattern.empty()) return absl::InvalidArgumentError("empty file pattern");
  const size_t glob = internal::GlobStart(pattern);
  if (glob != std::string_view::npos) {
    const std::string_view scheme = internal::UriScheme(pattern);
    if (scheme.empty() || scheme == "file") {
      // Local: only the directories the pattern can reach ('*' never crosses
      // '/'), not everything below its prefix, as a listing would.
      DATAECHO_ASSIGN_OR_RETURN(out, internal::ExpandLocalGlob(pattern));
    } else {
      const std::string prefix = internal::GlobUnescape(pattern.substr(0, glob));
      DATAECHO_ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, store.List(prefix));
      for (ObjectInfo& info : listed) {
        if (GlobMatch(pattern, info.uri)) out.push_back(std::move(info.uri));
      }
    }
    // A name that only looks like a glob ("part[1].tfrecord") is that name.
    if (out.empty()) {
      std::string literal = internal::GlobUnescape(pattern);
      if (store.Stat(literal).ok()) out.push_back(std::move(literal));
    }
  } else if (pattern.ends_with('/') && internal::UriScheme(pattern) != "http" &&
             internal::UriScheme(pattern) != "https") {
    DATAECHO_ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed,
                              store.List(internal::GlobUnescape(pattern)));
    for (ObjectInfo& info : listed) out.push_back(std::move(info.uri));
  } else {
    // One object. A URL keeps its query string and escapes as they are.
    const bool url =
        internal::UriScheme(pattern) == "http" || internal::UriScheme(pattern) == "https";
    std::string uri = url ? std::string(pattern) : internal::GlobUnescape(pattern);
    DATAECHO_RETURN_IF_ERROR(store.Stat(uri).status());
    out.push_back(std::move(uri));
  }
  if (out.empty()) {
    return absl::NotFoundError(fmt::format("no object matches '{}'", RedactUri(pattern)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> ExpandUris(ObjectStore& store,
                                                    const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  for (const std::string& pattern : patterns) {
    DATAECHO_ASSIGN_OR_RETURN(std::vector<std::string> uris, ExpandUris(store, pattern));
    out.insert(out.end(), uris.begin(), uris.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace dataecho
