// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The options of a record source (include/dataecho/formats/record_source.h):
// the names of Compression, which the CLI's flags and the Python options
// spell, and a shard's file numbering.
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

void SetShardFileNumbering(const Shard& shard, InterleaveOptions* options) {
  options->first_file_index = static_cast<uint64_t>(shard.rank);
  options->file_index_stride = static_cast<uint64_t>(shard.world_size);
}

}  // namespace dataecho
