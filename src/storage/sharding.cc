// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/sharding.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

absl::Status Check(const Shard& shard) {
  if (shard.world_size < 1 || shard.rank < 0 || shard.rank >= shard.world_size) {
    return absl::InvalidArgumentError(
        fmt::format("invalid shard from {}: rank {} of world size {} (need 0 <= rank < world_size)",
                    shard.source, shard.rank, shard.world_size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shard> ResolveShard(const ShardOptions& options) {
  Shard shard;
  if (options.rank >= 0 || options.world_size >= 0) {
    if (options.rank < 0 || options.world_size < 0) {
      return absl::InvalidArgumentError(
          fmt::format("ShardOptions: set both rank and world_size (got rank {}, world_size {})",
                      options.rank, options.world_size));
    }
    shard.rank = options.rank;
    shard.world_size = options.world_size;
    shard.source = "options";
    DATAECHO_RETURN_IF_ERROR(Check(shard));
    return shard;
  }
  static constexpr const char* kVars[][2] = {
      {"RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"},
  };
  for (const auto& [rank_var, size_var] : kVars) {
    const char* rank = std::getenv(rank_var);
    const char* size = std::getenv(size_var);
    if (rank == nullptr && size == nullptr) continue;
    if (rank == nullptr || size == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("{} and {} must be set together", rank_var, size_var));
    }
    if (!absl::SimpleAtoi(rank, &shard.rank) || !absl::SimpleAtoi(size, &shard.world_size)) {
      return absl::InvalidArgumentError(
          fmt::format("{}='{}' and {}='{}' must be integers", rank_var, rank, size_var, size));
    }
    shard.source = rank_var;
    DATAECHO_RETURN_IF_ERROR(Check(shard));
    return shard;
  }
  return shard;
}

std::vector<std::string> ShardUris(const std::vector<std::string>& uris, const Shard& shard) {
  std::vector<std::string> out;
  if (shard.world_size < 1 || shard.rank < 0) return out;
  for (size_t i = static_cast<size_t>(shard.rank); i < uris.size();
       i += static_cast<size_t>(shard.world_size)) {
    out.push_back(uris[i]);
  }
  return out;
}

}  // namespace dataecho
