// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// enum_names.h: the names of an option enum, both ways, for the
// FooName()/ParseFoo() pairs of the public headers (compression, image
// encoding, shard mode, echo placement, echo preference). Not part of the
// public API.
//
//   constexpr internal::EnumNames<Compression, 4> kCompressionNames{
//       "compression", {"none", "gzip", "zlib", "auto"}};  // Compression::kNone, ...
//   kCompressionNames.Name(Compression::kGzip);  // "gzip"
//   kCompressionNames.Parse("bz2");  // INVALID_ARGUMENT "unknown compression 'bz2' (one of ...)"
//
// Thread safety: constant tables.
#ifndef DATAECHO_SRC_ENUM_NAMES_H_
#define DATAECHO_SRC_ENUM_NAMES_H_

#include <array>
#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace dataecho::internal {

// The names of the values 0, 1, ..., N - 1 of enum E, in that order.
template <typename E, size_t N>
struct EnumNames {
  std::string_view what;  // what the values are, for errors ("compression")
  std::array<std::string_view, N> names;

  // The name of `value`; `unknown` for a value past the table.
  constexpr std::string_view Name(E value, std::string_view unknown = "?") const {
    const auto i = static_cast<size_t>(value);
    return i < N ? names[i] : unknown;
  }

  // The value named `name`; INVALID_ARGUMENT naming the valid names else.
  absl::StatusOr<E> Parse(std::string_view name) const {
    for (size_t i = 0; i < N; ++i) {
      if (names[i] == name) return static_cast<E>(i);
    }
    return absl::InvalidArgumentError(
        fmt::format("unknown {} '{}' (one of {})", what, name, fmt::join(names, ", ")));
  }
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_ENUM_NAMES_H_
