// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/epoch_plan.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "dataecho/internal/random.h"
#include "dataecho/memory.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/sharding.h"
#include "enum_names.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

using Order = std::vector<RecordRange>;
using u128 = unsigned __int128;

// Tags the generator of the file order, so that it differs from other streams
// derived from the same (seed, epoch).
constexpr uint64_t kFileOrderTag = 0x66696c65'6f726472ull;  // "fileordr"

uint64_t Records(const Order& order) {
  uint64_t n = 0;
  for (const RecordRange& r : order) n += r.size();
  return n;
}

// Appends `r` to `out`, merging it with the last range if it continues it.
void Append(Order& out, RecordRange r) {
  if (r.size() == 0) return;
  if (!out.empty() && out.back().file == r.file && out.back().end == r.begin) {
    out.back().end = r.end;
    return;
  }
  out.push_back(r);
}

// x * a / b without overflow (x, a <= 2^64, b > 0).
uint64_t MulDiv(uint64_t x, uint64_t a, uint64_t b) {
  return static_cast<uint64_t>(static_cast<u128>(x) * a / b);
}

// Splits `order` (n records) into `w` contiguous slices (see the header).
std::vector<Order> Split(const Order& order, int w, ShardMode mode) {
  std::vector<Order> slices(static_cast<size_t>(w));
  const uint64_t n = Records(order);
  if (n == 0) return slices;
  const uint64_t uw = static_cast<uint64_t>(w);
  uint64_t start = 0;  // records of `order` before the current range
  if (mode == ShardMode::kFiles) {
    for (const RecordRange& r : order) {
      slices[static_cast<size_t>(MulDiv(start, uw, n))].push_back(r);
      start += r.size();
    }
    return slices;
  }
  size_t rank = 0;
  uint64_t rank_end = MulDiv(1, n, uw);  // first record of rank + 1
  for (const RecordRange& r : order) {
    uint64_t begin = r.begin;
    while (begin < r.end) {
      while (rank_end <= start) rank_end = MulDiv(++rank + 1, n, uw);
      const uint64_t take = std::min(r.end - begin, rank_end - start);
      slices[rank].push_back({r.file, begin, begin + take});
      begin += take;
      start += take;
    }
  }
  return slices;
}

// What each rank of a run consumed when the job had consumed `delta` records of
// the run: the lockstep rule of the header (round-robin, exhausted ranks drop out).
std::vector<uint64_t> LockstepCounts(const std::vector<uint64_t>& sizes, uint64_t delta) {
  auto sum_at = [&](uint64_t level) {
    uint64_t s = 0;
    for (uint64_t size : sizes) s += std::min(size, level);
    return s;
  };
  // The largest level c with sum_at(c) <= delta.
  uint64_t lo = 0, hi = *std::max_element(sizes.begin(), sizes.end());
  while (lo < hi) {
    const uint64_t mid = hi - (hi - lo) / 2;  // rounds up; hi - lo + 1 overflows at 2^64 - 1
    if (sum_at(mid) <= delta) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  std::vector<uint64_t> counts(sizes.size());
  uint64_t extra = delta - sum_at(lo);
  for (size_t r = 0; r < sizes.size(); ++r) {
    counts[r] = std::min(sizes[r], lo);
    if (extra > 0 && sizes[r] > lo) {
      ++counts[r];
      --extra;
    }
  }
  return counts;
}

// The records of `slices` after dropping `counts[r]` from the front of slice r,
// in the epoch's order.
Order Remainder(const std::vector<Order>& slices, const std::vector<uint64_t>& counts) {
  Order out;
  for (size_t r = 0; r < slices.size(); ++r) {
    uint64_t skip = counts[r];
    for (const RecordRange& range : slices[r]) {
      const uint64_t k = std::min(skip, range.size());
      skip -= k;
      Append(out, {range.file, range.begin + k, range.end});
    }
  }
  return out;
}

// INVALID_ARGUMENT for a world size outside [1, ShardOptions::kMaxWorldSize]
// (what the plan allocates per rank is sized by it); RESOURCE_EXHAUSTED if
// its per-rank tables do not fit the memory cap.
absl::Status CheckWorldSize(int64_t world_size, std::string_view what) {
  if (world_size < 1 || world_size > ShardOptions::kMaxWorldSize) {
    return absl::InvalidArgumentError(
        fmt::format("epoch plan: {} must be in [1, {}] (ShardOptions::kMaxWorldSize), got {}", what,
                    ShardOptions::kMaxWorldSize, world_size));
  }
  // A slice, its size and its count per rank.
  return CheckMemoryEstimate("epoch plan", what, world_size,
                             static_cast<int64_t>(sizeof(Order) + 2 * sizeof(uint64_t)), 0, "");
}

struct Replayed {
  Order order;  // the records left for the current run, in the epoch's order
  uint64_t total = 0;
  uint64_t position = 0;
};

absl::StatusOr<Replayed> Replay(std::span<const uint64_t> records_per_file,
                                const EpochPlanOptions& options, const EpochProgress& progress,
                                int world_size) {
  DATAECHO_RETURN_IF_ERROR(CheckWorldSize(world_size, "world_size"));
  // The epoch's records: their sum must fit in 64 bits (a wrapped sum made
  // every rank's share empty, or out of range).
  Replayed out;
  for (size_t f = 0; f < records_per_file.size(); ++f) {
    if (__builtin_add_overflow(out.total, records_per_file[f], &out.total)) {
      return absl::InvalidArgumentError(fmt::format(
          "epoch plan: the record counts overflow 64 bits at file {} ({} records): the epoch "
          "cannot have more than {} records",
          f, records_per_file[f], UINT64_MAX));
    }
  }
  for (uint64_t f : EpochFileOrder(records_per_file.size(), options.seed, progress.epoch,
                                   options.shuffle_files)) {
    Append(out.order, {f, 0, records_per_file[f]});
  }
  for (size_t i = 0; i < progress.runs.size(); ++i) {
    const EpochRestart& run = progress.runs[i];
    auto bad = [&](std::string_view what) {
      return absl::InvalidArgumentError(
          fmt::format("epoch {} run {} (world_size {}, position {}): {}", progress.epoch, i,
                      run.world_size, run.position, what));
    };
    if (absl::Status s = CheckWorldSize(run.world_size, "world_size"); !s.ok()) {
      return absl::Status(s.code(), fmt::format("epoch {} run {}: {}", progress.epoch, i,
                                                std::string(s.message())));
    }
    if (run.position < out.position) {
      return bad(fmt::format("position is before the previous run's {}", out.position));
    }
    if (run.position > out.total) {
      return bad(fmt::format("position is past the epoch's {} records", out.total));
    }
    const uint64_t delta = run.position - out.position;
    std::vector<Order> slices = Split(out.order, run.world_size, options.mode);
    std::vector<uint64_t> sizes;
    sizes.reserve(slices.size());
    for (const Order& s : slices) sizes.push_back(Records(s));
    std::vector<uint64_t> counts;
    if (run.consumed.empty()) {
      counts = LockstepCounts(sizes, delta);
    } else {
      if (run.consumed.size() != slices.size()) {
        return bad(
            fmt::format("consumed has {} entries, one per rank expected", run.consumed.size()));
      }
      uint64_t sum = 0;
      for (size_t r = 0; r < sizes.size(); ++r) {
        if (run.consumed[r] > sizes[r]) {
          return bad(fmt::format("rank {} consumed {} of a slice of {} records", r, run.consumed[r],
                                 sizes[r]));
        }
        sum += run.consumed[r];
      }
      if (sum != delta) {
        return bad(fmt::format("consumed sums to {}, the position says {}", sum, delta));
      }
      counts = run.consumed;
    }
    out.order = Remainder(slices, counts);
    out.position = run.position;
  }
  return out;
}

}  // namespace

constexpr internal::EnumNames<ShardMode, 2> kShardModeNames{"shard mode", {"files", "records"}};

std::string_view ShardModeName(ShardMode mode) { return kShardModeNames.Name(mode, "records"); }

absl::StatusOr<ShardMode> ParseShardMode(std::string_view name) {
  return kShardModeNames.Parse(name);
}

std::vector<uint64_t> EpochFileOrder(size_t num_files, uint64_t seed, uint64_t epoch,
                                     bool shuffle) {
  std::vector<uint64_t> order(num_files);
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (!shuffle) return order;
  internal::Rng rng(internal::MixSeed(seed, epoch, kFileOrderTag));
  for (size_t i = num_files; i > 1; --i) {  // Fisher-Yates, with our own range draw
    std::swap(order[i - 1], order[rng.Below(i)]);
  }
  return order;
}

uint64_t EpochPlan::RankRecords(int rank) const {
  if (rank < 0 || static_cast<size_t>(rank) >= ranks.size()) return 0;
  return Records(ranks[static_cast<size_t>(rank)]);
}

absl::StatusOr<EpochPlan> PlanEpoch(std::span<const uint64_t> records_per_file,
                                    const EpochPlanOptions& options, const EpochProgress& progress,
                                    int world_size) {
  absl::StatusOr<Replayed> replayed = Replay(records_per_file, options, progress, world_size);
  if (!replayed.ok()) return replayed.status();
  EpochPlan plan;
  plan.epoch = progress.epoch;
  plan.total_records = replayed->total;
  plan.position = replayed->position;
  plan.ranks = Split(replayed->order, world_size, options.mode);
  return plan;
}

absl::StatusOr<std::vector<RecordRange>> PlanRank(std::span<const uint64_t> records_per_file,
                                                  const EpochPlanOptions& options,
                                                  const EpochProgress& progress, int rank,
                                                  int world_size) {
  if (rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        fmt::format("epoch plan: rank {} outside [0, world_size {})", rank, world_size));
  }
  absl::StatusOr<EpochPlan> plan = PlanEpoch(records_per_file, options, progress, world_size);
  if (!plan.ok()) return plan.status();
  return std::move(plan->ranks[static_cast<size_t>(rank)]);
}

}  // namespace dataecho
