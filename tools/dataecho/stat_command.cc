// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho stat: counts records and sums their payload CRCs.
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "command.h"
#include "common/command_line.h"
#include "dataecho/crc32c.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"

ABSL_FLAG(std::string, format, "tfrecord",
          "tfrecord (default); idx (each row of an IDX file is a\n"
          "record); fixed:N (records of N bytes)");
ABSL_FLAG(bool, skip_corrupt, false,
          "tfrecord: skip records with a bad CRC (and the rest of\n"
          "a file after a bad length) instead of failing");
ABSL_FLAG(int64_t, max_skipped, 1000,
          "with --skip_corrupt: fail after more than K skips\n"
          "(default 1000)");

namespace dataecho::tool {
namespace {

// The flags of `dataecho stat`, in the order of its usage text.
constexpr tools::FlagSpec kStatFlags[] = {
    {"format", "FORMAT"},
    {"compression", "C",
     "none, gzip, zlib or auto (default: gzip for URIs\n"
     "ending in .gz, else none)"},
    {"skip_corrupt", ""},
    {"max_skipped", "K"},
};

constexpr char kStatUsageHead[] =
    R"(Usage: dataecho stat [--format=tfrecord|idx|fixed:N] [--skip_corrupt] [OPTION]... URI...

Read every record of the files URI... (in order) and print one JSON object:
  {"records": N, "payload_bytes": B, "crc32c_sum": S, "skipped_corrupt": K}
where B is the total size of the records' payloads (not of the files), S the sum of the plain (unmasked) CRC-32C
of each payload mod 2^64 and K the corrupt regions skipped. A URI containing
'*', '?' or '[' is a glob.

Options:
)";
constexpr char kStatUsageTail[] = R"(  -h, --help           show this help and exit

On an error (missing file, truncated or corrupted record, ...) nothing is
printed on stdout; the status code name and message go to stderr and the
exit status is 1.

Examples:
  dataecho stat /data/train-*.tfrecord
  dataecho stat --skip_corrupt gs://bucket/shards/train-00000-of-00008
  dataecho stat --format=idx /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
  dataecho stat --format=fixed:3073 cifar-10-batches-bin/data_batch_1.bin
)";

int Stat(const tools::CommandLine& args) {
  for (const std::string& uri : args.positional) {
    if (uri.empty()) return UsageError("stat", "an empty URI was given");
  }
  auto compression =
      ParseCompression(args.given.count("compression") ? absl::GetFlag(FLAGS_compression) : "auto");
  if (!compression.ok())
    return UsageError(
        "stat", fmt::format("--compression: {}", std::string(compression.status().message())));
  const int64_t max_skipped = absl::GetFlag(FLAGS_max_skipped);
  if (absl::Status s = CheckRange("max_skipped", max_skipped, 0, INT64_MAX); !s.ok())
    return UsageError("stat", s);
  const std::string format = absl::GetFlag(FLAGS_format);
  const bool skip_corrupt = absl::GetFlag(FLAGS_skip_corrupt);
  if (skip_corrupt && format != "tfrecord")
    return UsageError("stat", "--skip_corrupt applies to --format=tfrecord");

  // The format first (a usage error before any I/O), then the URIs.
  uint64_t fixed_bytes = 0;
  if (format.rfind("fixed:", 0) == 0) {
    const std::string num = format.substr(6);
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), fixed_bytes);
    if (ec != std::errc() || end != num.data() + num.size() || fixed_bytes == 0 ||
        fixed_bytes > FixedLengthOptions::kMaxRecordBytes) {
      return UsageError("stat", fmt::format("--format=fixed:N needs a record size N in 1..{} "
                                            "(2^30), got '{}'",
                                            FixedLengthOptions::kMaxRecordBytes, format));
    }
  } else if (format != "tfrecord" && format != "idx") {
    return UsageError("stat",
                      fmt::format("unknown --format '{}' (tfrecord, idx or fixed:N)", format));
  }

  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  absl::StatusOr<std::vector<std::string>> expanded = ExpandPatterns(*store, args.positional);
  if (!expanded.ok()) return Fail(expanded.status());
  const std::vector<std::string>& uris = *expanded;

  StagePtr<Record> source;
  if (format == "tfrecord") {
    source = MakeTFRecordSource(
        store, uris,
        {.compression = *compression, .skip_corrupt = skip_corrupt, .max_skipped = max_skipped});
  } else if (format == "idx") {
    source = MakeIdxRecordSource(store, uris, {.compression = *compression});
  } else {
    source = MakeFixedLengthSource(store, uris,
                                   {.record_bytes = fixed_bytes, .compression = *compression});
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
      fmt::format(
          R"({{"records": {}, "payload_bytes": {}, "crc32c_sum": {}, "skipped_corrupt": {}}})",
          records, bytes, crc_sum, skipped)
          .c_str());
  return 0;
}

}  // namespace

int StatCommand(const std::vector<std::string>& argv) {
  return RunCommand({"stat", kStatFlags, kStatUsageHead, kStatUsageTail, Operands::kUris, Stat},
                    argv);
}

}  // namespace dataecho::tool
