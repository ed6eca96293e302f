// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The names of Compression (include/dataecho/formats/record_source.h), which
// the CLI's flags and the Python options spell.
#include <string_view>

#include "dataecho/formats/record_source.h"
#include "fmt/format.h"

namespace dataecho {

std::string_view CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kZlib: return "zlib";
    case Compression::kAuto: return "auto";
  }
  return "unknown";
}

absl::StatusOr<Compression> ParseCompression(std::string_view name) {
  for (Compression c :
       {Compression::kNone, Compression::kGzip, Compression::kZlib, Compression::kAuto}) {
    if (CompressionName(c) == name) return c;
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown compression '{}' (one of none, gzip, zlib, auto)", name));
}

}  // namespace dataecho
