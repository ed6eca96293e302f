// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/str_cat.h: absl::StrCat that also takes std::string_view, for the
// messages the public headers build. (Abseil as Debian builds it has its own
// absl::string_view, which std::string_view does not convert to; the
// headers use this rather than a formatting library, which every program
// including them would parse and instantiate.)
//
//   return absl::InvalidArgumentError(internal::StrCat(name, ": depth must be >= 1, got ", d));
#ifndef DATAECHO_INTERNAL_STR_CAT_H_
#define DATAECHO_INTERNAL_STR_CAT_H_

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dataecho::internal {

inline absl::string_view StrCatPiece(std::string_view s) { return {s.data(), s.size()}; }
template <typename T>
const T& StrCatPiece(const T& value) {
  return value;
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(StrCatPiece(args)...);
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_STR_CAT_H_
