// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/glob.h"

#include <fnmatch.h>

#include <algorithm>

#include "absl/status/status.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

bool IsGlob(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

bool GlobMatch(std::string_view pattern, std::string_view uri) {
  std::string p(pattern), u(uri);
  return fnmatch(p.c_str(), u.c_str(), FNM_PATHNAME) == 0;
}

absl::StatusOr<std::vector<std::string>> ExpandUris(ObjectStore& store, std::string_view pattern) {
  std::vector<std::string> out;
  if (pattern.empty()) return absl::InvalidArgumentError("empty file pattern");
  if (IsGlob(pattern)) {
    std::string_view prefix = pattern.substr(0, pattern.find_first_of("*?["));
    DATAECHO_ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, store.List(prefix));
    for (ObjectInfo& info : listed) {
      if (GlobMatch(pattern, info.uri)) out.push_back(std::move(info.uri));
    }
  } else if (pattern.ends_with('/')) {
    DATAECHO_ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, store.List(pattern));
    for (ObjectInfo& info : listed) out.push_back(std::move(info.uri));
  } else {
    DATAECHO_RETURN_IF_ERROR(store.Stat(pattern).status());
    out.push_back(std::string(pattern));
  }
  if (out.empty()) {
    return absl::NotFoundError(fmt::format("no object matches '{}'", pattern));
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
