// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/sharding.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace dataecho {
namespace {

// `values`: the variables the shard was read from, for the message ("RANK=0
// and WORLD_SIZE=2147483647").
absl::Status Check(const Shard& shard, std::string_view values = "") {
  const std::string from =
      values.empty() ? shard.source : fmt::format("{} ({})", shard.source, values);
  if (shard.world_size > ShardOptions::kMaxWorldSize) {
    return absl::InvalidArgumentError(fmt::format(
        "invalid shard from {}: world size {} is above {} (ShardOptions::kMaxWorldSize)", from,
        shard.world_size, ShardOptions::kMaxWorldSize));
  }
  if (shard.world_size < 1) {
    return absl::InvalidArgumentError(fmt::format(
        "invalid shard from {}: world_size {} is out of range (need 1 <= world_size <= {})", from,
        shard.world_size, ShardOptions::kMaxWorldSize));
  }
  if (shard.rank < 0 || shard.rank >= shard.world_size) {
    return absl::InvalidArgumentError(
        fmt::format("invalid shard from {}: rank {} is out of range [0, {}) for world_size {}{}",
                    from, shard.rank, shard.world_size, shard.world_size,
                    shard.source == "options" && shard.rank == -1
                        ? " (rank -1 takes the shard from the environment only with world_size -1)"
                        : ""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shard> ResolveShard(const ShardOptions& options) {
  Shard shard;
  shard.allow_empty = options.allow_empty;
  if (options.rank != -1 || options.world_size != -1) {  // set explicitly (-1 -1: environment)
    if (options.world_size == -1) {
      return absl::InvalidArgumentError(
          options.rank >= 0
              ? fmt::format("ShardOptions: rank {} set without world_size: set both, or neither "
                            "to take them from the environment",
                            options.rank)
              : fmt::format("ShardOptions: rank {} is out of range (need 0 <= rank < world_size, "
                            "or rank = world_size = -1 for the environment)",
                            options.rank));
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
    DATAECHO_RETURN_IF_ERROR(Check(
        shard, fmt::format("{}={} and {}={}", rank_var, shard.rank, size_var, shard.world_size)));
    return shard;
  }
  return shard;
}

absl::StatusOr<std::vector<std::string>> ShardUris(const std::vector<std::string>& uris,
                                                   const Shard& shard) {
  DATAECHO_RETURN_IF_ERROR(Check(shard));
  std::vector<std::string> out;
  for (size_t i = static_cast<size_t>(shard.rank); i < uris.size();
       i += static_cast<size_t>(shard.world_size)) {
    out.push_back(uris[i]);
  }
  if (out.empty() && !shard.allow_empty) {
    const std::string who = fmt::format("rank {} of world size {} (from {}) would get no file",
                                        shard.rank, shard.world_size, shard.source);
    if (uris.empty()) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: the file list is empty (set ShardOptions::allow_empty to accept it)", who));
    }
    const int first_idle = static_cast<int>(uris.size());
    return absl::FailedPreconditionError(fmt::format(
        "{}: {} file(s) for {} ranks leave {} without data, and a data-parallel job hangs when "
        "one rank runs out first; use at most {} rank(s), split the data into at least {} files, "
        "or set ShardOptions::allow_empty",
        who, uris.size(), shard.world_size,
        first_idle == shard.world_size - 1
            ? fmt::format("rank {}", first_idle)
            : fmt::format("ranks {}-{}", first_idle, shard.world_size - 1),
        uris.size(), shard.world_size));
  }
  return out;
}

double ShardSizes::Imbalance() const {
  if (ranks.empty()) return 1;
  int64_t lo = ranks[0].bytes, hi = ranks[0].bytes;
  for (const ShardSize& r : ranks) {
    lo = std::min(lo, r.bytes);
    hi = std::max(hi, r.bytes);
  }
  if (hi == 0) return 1;
  if (lo == 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(hi) / static_cast<double>(lo);
}

std::string ShardSizes::Summary() const {
  int64_t files = 0;
  std::vector<int64_t> counts, bytes;
  for (const ShardSize& r : ranks) {
    files += r.files;
    counts.push_back(r.files);
    bytes.push_back(r.bytes);
  }
  const double imbalance = Imbalance();
  return fmt::format("{} rank(s) over {} file(s): files {}, bytes {}, largest/smallest {}",
                     ranks.size(), files, fmt::join(counts, "/"), fmt::join(bytes, "/"),
                     std::isinf(imbalance) ? std::string("inf (a rank has no data)")
                                           : fmt::format("{:.2f}", imbalance));
}

absl::StatusOr<ShardSizes> MeasureShards(ObjectStore& store, const std::vector<std::string>& uris,
                                         int world_size) {
  if (world_size < 1 || world_size > ShardOptions::kMaxWorldSize) {
    return absl::InvalidArgumentError(
        fmt::format("MeasureShards: world size {} (need 1..{}, ShardOptions::kMaxWorldSize)",
                    world_size, ShardOptions::kMaxWorldSize));
  }
  ShardSizes sizes;
  for (int rank = 0; rank < world_size; ++rank) sizes.ranks.push_back({.rank = rank});
  for (size_t i = 0; i < uris.size(); ++i) {
    absl::StatusOr<ObjectInfo> info = store.Stat(uris[i]);
    if (!info.ok()) return info.status();
    ShardSize& r = sizes.ranks[i % static_cast<size_t>(world_size)];
    ++r.files;
    r.bytes += static_cast<int64_t>(info->size);
  }
  return sizes;
}

}  // namespace dataecho
