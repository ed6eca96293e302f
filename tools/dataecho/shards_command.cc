// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho shards: how files split between the ranks of a data-parallel job.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "command.h"
#include "common/command_line.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/storage/sharding.h"
#include "dataecho/text.h"
#include "fmt/format.h"

ABSL_FLAG(int64_t, world_size, -1,
          "number of ranks (default: from the launcher's\n"
          "environment, else 1)");
ABSL_FLAG(int64_t, rank, -1,
          "this process's rank (default: 0 with --world_size,\nelse from the environment)");
ABSL_FLAG(bool, allow_empty, false, "exit 0 even if a rank gets no file");
ABSL_FLAG(bool, records, false,
          "also count each rank's records (reads every file:\n"
          "TFRecord, gzip by a .gz suffix)");

namespace dataecho::tool {
namespace {

// The flags of `dataecho shards`, in the order of its usage text.
constexpr tools::FlagSpec kShardsFlags[] = {
    {"world_size", "N"},
    {"rank", "R"},
    {"allow_empty", ""},
    {"records", ""},
};

constexpr char kShardsUsageHead[] =
    R"(Usage: dataecho shards [--world_size=N] [--records] [--allow_empty] URI...

Show how the files URI... (in the order given; a URI containing '*', '?' or
'[' is a glob, expanded sorted) split between the ranks of a data-parallel job
as dataecho::ShardUris splits them (rank r takes files r, r + N, r + 2N, ...),
and print one JSON object:
  {"world_size": N, "rank": R, "source": S, "files": F,
   "ranks": [{"rank": 0, "files": F0, "bytes": B0, "records": R0}, ...],
   "bytes_imbalance": X, "records_imbalance": Y}
where bytes are the files' sizes as stored, records (only with --records) are
counted by reading every file, an imbalance is the largest rank's over the
smallest's (null when a rank has none), and R and S are this process's rank
and where the world size came from ("options", "RANK",
"OMPI_COMM_WORLD_RANK", "SLURM_PROCID" or "default"). Without --world_size,
the launcher's variables decide: RANK/WORLD_SIZE, then
OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, then SLURM_PROCID/SLURM_NTASKS.

Options:
)";
constexpr char kShardsUsageTail[] = R"(  -h, --help           show this help and exit

Exit status: 0; 1 when a rank would get no file (after the JSON: the message
names the rank, the world size and the file count; a data-parallel job hangs
when one rank runs out of data first) unless --allow_empty, or on a storage
error; 2 on a usage error.

Examples:
  dataecho shards --world_size=3 /data/train-*.tfrecord
  WORLD_SIZE=8 RANK=5 dataecho shards --records gs://bucket/shards/train-*
)";

std::string Imbalance(const std::vector<int64_t>& sizes) {
  int64_t lo = INT64_MAX, hi = 0;
  for (int64_t s : sizes) {
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  if (sizes.empty() || hi == 0) return "1";
  if (lo == 0) return "null";
  return JsonNumber(static_cast<double>(hi) / static_cast<double>(lo));
}

// The records of `uris`, read through the TFRecord reader.
absl::StatusOr<int64_t> CountRecords(const std::shared_ptr<ObjectStore>& store,
                                     const std::vector<std::string>& uris) {
  if (uris.empty()) return 0;
  StagePtr<Record> source = MakeTFRecordSource(store, uris, {.compression = Compression::kAuto});
  int64_t n = 0;
  while (true) {
    absl::StatusOr<std::optional<Record>> next = source->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return n;
    ++n;
  }
}

int Shards(const tools::CommandLine& args) {
  int64_t world_size = absl::GetFlag(FLAGS_world_size);
  int64_t rank = absl::GetFlag(FLAGS_rank);
  if (args.given.count("world_size")) {
    if (absl::Status s = CheckRange("world_size", world_size, 1, ShardOptions::kMaxWorldSize);
        !s.ok())
      return UsageError("shards", s);
    if (!args.given.count("rank")) rank = 0;
    if (absl::Status s = CheckRange("rank", rank, 0, world_size - 1); !s.ok())
      return UsageError("shards", s);
  } else if (args.given.count("rank")) {
    return UsageError("shards", "--rank needs --world_size");
  }
  const bool allow_empty = absl::GetFlag(FLAGS_allow_empty);
  absl::StatusOr<Shard> shard = ResolveShard({.rank = static_cast<int>(rank),
                                              .world_size = static_cast<int>(world_size),
                                              .allow_empty = allow_empty});
  if (!shard.ok()) return Fail(shard.status());

  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  absl::StatusOr<std::vector<std::string>> expanded = ExpandPatterns(*store, args.positional);
  if (!expanded.ok()) return Fail(expanded.status());
  const std::vector<std::string>& uris = *expanded;
  absl::StatusOr<ShardSizes> sizes = MeasureShards(*store, uris, shard->world_size);
  if (!sizes.ok()) return Fail(sizes.status());

  const bool records = absl::GetFlag(FLAGS_records);
  std::vector<int64_t> bytes, counts;
  std::string ranks;
  for (const ShardSize& r : sizes->ranks) {
    bytes.push_back(r.bytes);
    std::string fields =
        fmt::format(R"({{"rank": {}, "files": {}, "bytes": {})", r.rank, r.files, r.bytes);
    if (records) {
      absl::StatusOr<std::vector<std::string>> mine =
          ShardUris(uris, {.rank = r.rank, .world_size = shard->world_size, .allow_empty = true});
      if (!mine.ok()) return Fail(mine.status());
      absl::StatusOr<int64_t> n = CountRecords(store, *mine);
      if (!n.ok()) return Fail(n.status());
      counts.push_back(*n);
      fields += fmt::format(R"(, "records": {})", *n);
    }
    ranks += (ranks.empty() ? "" : ", ") + fields + "}";
  }
  std::printf("%s\n",
              fmt::format(R"({{"world_size": {}, "rank": {}, "source": {}, "files": {}, )"
                          R"("ranks": [{}], "bytes_imbalance": {}{}}})",
                          shard->world_size, shard->rank, JsonQuote(shard->source), uris.size(),
                          ranks, Imbalance(bytes),
                          records ? fmt::format(R"(, "records_imbalance": {})", Imbalance(counts))
                                  : std::string())
                  .c_str());
  std::fflush(stdout);
  // This process's rank first (its own error), then every other rank.
  std::vector<Shard> checks = {*shard};
  for (int r = 0; r < shard->world_size; ++r) {
    checks.push_back(*shard);
    checks.back().rank = r;
  }
  for (const Shard& s : checks) {
    if (absl::StatusOr<std::vector<std::string>> files = ShardUris(uris, s); !files.ok()) {
      const int status = Fail(files.status());
      std::fputs("dataecho shards: --allow_empty accepts ranks without data\n", stderr);
      return status;
    }
  }
  return 0;
}

}  // namespace

int ShardsCommand(const std::vector<std::string>& argv) {
  return RunCommand(
      {"shards", kShardsFlags, kShardsUsageHead, kShardsUsageTail, Operands::kUris, Shards}, argv);
}

}  // namespace dataecho::tool
