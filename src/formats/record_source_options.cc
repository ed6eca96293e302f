// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The options of a record source (include/dataecho/formats/record_source.h):
// the names of Compression, which the CLI's flags and the Python options
// spell, and a shard's file numbering.
#include <string_view>

#include "dataecho/formats/record_source.h"
#include "enum_names.h"

namespace dataecho {

namespace {
constexpr internal::EnumNames<Compression, 4> kCompressionNames{"compression",
                                                                {"none", "gzip", "zlib", "auto"}};
}  // namespace

std::string_view CompressionName(Compression compression) {
  return kCompressionNames.Name(compression, "unknown");
}

absl::StatusOr<Compression> ParseCompression(std::string_view name) {
  return kCompressionNames.Parse(name);
}

void SetShardFileNumbering(const Shard& shard, InterleaveOptions* options) {
  options->first_file_index = static_cast<uint64_t>(shard.rank);
  options->file_index_stride = static_cast<uint64_t>(shard.world_size);
}

}  // namespace dataecho
