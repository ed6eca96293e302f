// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho stat: counts records and sums their payload CRCs.
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dataecho/formats/crc32c.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "flags.h"
#include "fmt/format.h"

namespace dataecho::tool {
namespace {

constexpr char kStatUsage[] =
    R"(Usage: dataecho stat [--format=tfrecord|idx|fixed:N] [--skip_corrupt] [OPTION]... URI...

Read every record of the files URI... (in order) and print one JSON object:
  {"records": N, "bytes": B, "crc32c_sum": S, "skipped_corrupt": K}
where B is the total payload bytes, S the sum of the plain (unmasked) CRC-32C
of each payload mod 2^64 and K the corrupt regions skipped. A URI containing
'*', '?' or '[' is a glob.

Options:
  --format=FORMAT      tfrecord (default); idx (each row of an IDX file is a
                       record); fixed:N (records of N bytes)
  --compression=C      none, gzip, zlib or auto (default: gzip for URIs
                       ending in .gz, else none)
  --skip_corrupt       tfrecord: skip records with a bad CRC (and the rest of
                       a file after a bad length) instead of failing
  --max_skipped=K      with --skip_corrupt: fail after more than K skips
                       (default 1000)
  -h, --help           show this help and exit

On an error (missing file, truncated or corrupted record, ...) nothing is
printed on stdout; the status code name and message go to stderr and the
exit status is 1.

Examples:
  dataecho stat /data/train-*.tfrecord
  dataecho stat --skip_corrupt gs://bucket/shards/train-00000-of-00008
  dataecho stat --format=idx /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
  dataecho stat --format=fixed:3073 cifar-10-batches-bin/data_batch_1.bin
)";

absl::StatusOr<Compression> ParseCompression(const std::string& s) {
  if (s == "none") return Compression::kNone;
  if (s == "gzip") return Compression::kGzip;
  if (s == "zlib") return Compression::kZlib;
  if (s == "auto") return Compression::kAuto;
  return absl::InvalidArgumentError(
      fmt::format("--compression must be none, gzip, zlib or auto, got '{}'", s));
}

}  // namespace

int StatCommand(const std::vector<std::string>& argv) {
  auto args = ParseArgs(argv, {"format", "compression", "max_skipped"}, {"skip_corrupt"});
  if (!args.ok()) return UsageError("stat", args.status());
  if (args->Has("help")) {
    std::fputs(kStatUsage, stdout);
    return 0;
  }
  if (args->positional.empty()) return UsageError("stat", "no URI given");
  auto compression = ParseCompression(args->Get("compression", "auto"));
  if (!compression.ok()) return UsageError("stat", compression.status());
  auto max_skipped = args->GetInt("max_skipped", 1000, 0, INT64_MAX);
  if (!max_skipped.ok()) return UsageError("stat", max_skipped.status());
  const std::string format = args->Get("format", "tfrecord");
  const bool skip_corrupt = args->Has("skip_corrupt");
  if (skip_corrupt && format != "tfrecord")
    return UsageError("stat", "--skip_corrupt applies to --format=tfrecord");

  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  std::vector<std::string> uris;
  for (const std::string& pattern : args->positional) {
    if (!IsGlob(pattern)) {
      uris.push_back(pattern);
      continue;
    }
    auto expanded = ExpandUris(*store, pattern);
    if (!expanded.ok()) return Fail(expanded.status());
    uris.insert(uris.end(), expanded->begin(), expanded->end());
  }

  StagePtr<Record> source;
  if (format == "tfrecord") {
    source = MakeTFRecordSource(
        store, uris,
        {.compression = *compression, .skip_corrupt = skip_corrupt, .max_skipped = *max_skipped});
  } else if (format == "idx") {
    source = MakeIdxRecordSource(store, uris, {.compression = *compression});
  } else if (format.rfind("fixed:", 0) == 0) {
    uint64_t n = 0;
    const std::string num = format.substr(6);
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
    if (ec != std::errc() || end != num.data() + num.size() || n == 0) {
      return UsageError(
          "stat", fmt::format("--format=fixed:N needs a record size N > 0, got '{}'", format));
    }
    source = MakeFixedLengthSource(store, uris, {.record_bytes = n, .compression = *compression});
  } else {
    return UsageError("stat",
                      fmt::format("unknown --format '{}' (tfrecord, idx or fixed:N)", format));
  }

  uint64_t records = 0, bytes = 0, crc_sum = 0;
  while (true) {
    auto next = source->Next();
    if (!next.ok()) return Fail(next.status());
    if (!next->has_value()) break;
    const Buffer& data = (*next)->data;
    ++records;
    bytes += data.size();
    crc_sum += Crc32c(data.data(), data.size());
  }
  std::vector<StageStats> stats;
  source->AppendStats(&stats);
  const auto skipped =
      static_cast<int64_t>(stats.empty() ? 0 : stats.back().Extra("skipped_corrupt"));
  std::printf(
      "%s\n",
      fmt::format(R"({{"records": {}, "bytes": {}, "crc32c_sum": {}, "skipped_corrupt": {}}})",
                  records, bytes, crc_sum, skipped)
          .c_str());
  return 0;
}

}  // namespace dataecho::tool
