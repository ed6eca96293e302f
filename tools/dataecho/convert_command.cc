// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho convert: IDX images + labels -> sharded TFRecord of image records.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "command.h"
#include "common/command_line.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/text.h"
#include "fmt/format.h"
#include "shard_set.h"

ABSL_FLAG(std::string, images, "", "IDX images, e.g. train-images-idx3-ubyte.gz");
ABSL_FLAG(std::string, labels, "", "IDX labels, e.g. train-labels-idx1-ubyte.gz");
ABSL_FLAG(std::string, output, "",
          "local path prefix of the shards (missing directories are created)");
ABSL_FLAG(int64_t, shards, 4, "number of shards (default 4)");
ABSL_FLAG(std::string, encoding, "raw", "raw (default) or jpeg");
ABSL_FLAG(int64_t, jpeg_quality, 90, "1..100 (default 90)");
ABSL_FLAG(int64_t, limit, INT64_MAX, "convert only the first N examples (default: all)");

namespace dataecho::tool {
namespace {

// The flags of `dataecho convert`, in the order of its usage text.
constexpr tools::FlagSpec kConvertFlags[] = {
    {"images", "URI"},
    {"labels", "URI"},
    {"output", "PREFIX"},
    {"shards", "N"},
    {"encoding", "E"},
    {"jpeg_quality", "Q"},
    {"compression", "C",
     "none (default), gzip or zlib for the shard files\n"
     "(gzip adds \".gz\" to the names)"},
    {"limit", "N"},
};

constexpr char kConvertUsageHead[] =
    R"(Usage: dataecho convert --images=URI --labels=URI --output=PREFIX [OPTION]...

Convert an IDX images file and its labels file (MNIST, Fashion-MNIST; plain or
.gz) into TFRecord shards PREFIX-00000-of-0000N.tfrecord. Each record holds one
labelled image in the layout of docs/formats.md ("DEIR" header, then raw
pixels or a JPEG), readable with dataecho::DecodeImageRecord(). Example i goes
to shard i mod N. The inputs are checked first; the shards are written under
temporary names and take their names only when all are complete, so a failed
convert leaves earlier shards as they were. Missing directories are created.
Prints one JSON object on stdout:
  {"records": N, "shards": S, "encoding": E, "file_bytes": B, "files": [...]}
where B is the total size of the shard files.

Options:
)";
constexpr char kConvertUsageTail[] = R"(  -h, --help           show this help and exit

Example:
  dataecho convert --images=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
      --labels=/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz \
      --output=/data/fmnist/train --shards=8 --encoding=jpeg
)";

int Convert(const tools::CommandLine& args) {
  for (const char* required : {"images", "labels", "output"}) {
    if (!args.given.count(required))
      return UsageError("convert", fmt::format("--{} is required", required));
  }
  const std::string prefix = absl::GetFlag(FLAGS_output);
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"images", absl::GetFlag(FLAGS_images)},
        {"labels", absl::GetFlag(FLAGS_labels)},
        {"output", prefix}}) {
    if (value.empty()) return UsageError("convert", fmt::format("--{} is empty", name));
  }
  if (prefix.back() == '/') {
    return UsageError("convert", fmt::format("--output={} names a directory: give a path prefix "
                                             "such as {}train",
                                             prefix, prefix));
  }
  const int64_t shards = absl::GetFlag(FLAGS_shards);
  const int64_t quality = absl::GetFlag(FLAGS_jpeg_quality);
  const int64_t limit = absl::GetFlag(FLAGS_limit);
  for (const absl::Status& s :
       {CheckRange("shards", shards, 1, 100000), CheckRange("jpeg_quality", quality, 1, 100),
        CheckRange("limit", limit, 0, INT64_MAX)}) {
    if (!s.ok()) return UsageError("convert", s);
  }
  ImageRecordOptions record_options{.jpeg_quality = static_cast<int>(quality)};
  const absl::StatusOr<ImageEncoding> encoding = ParseImageEncoding(absl::GetFlag(FLAGS_encoding));
  if (!encoding.ok())
    return UsageError("convert",
                      fmt::format("--encoding: {}", std::string(encoding.status().message())));
  record_options.encoding = *encoding;
  const absl::StatusOr<Compression> compression =
      ParseCompression(args.given.count("compression") ? absl::GetFlag(FLAGS_compression) : "none");
  if (!compression.ok() || *compression == Compression::kAuto) {
    return UsageError("convert", fmt::format("--compression must be none, gzip or zlib, got '{}'",
                                             absl::GetFlag(FLAGS_compression)));
  }
  TFRecordWriterOptions writer_options{.compression = *compression};
  const std::string suffix = *compression == Compression::kGzip ? ".tfrecord.gz" : ".tfrecord";

  // The inputs first: both IDX headers (and that they have as many rows) are
  // checked when the first example is read, before any output exists.
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  auto source = MakeIdxSource(store, absl::GetFlag(FLAGS_images), absl::GetFlag(FLAGS_labels));
  absl::StatusOr<std::optional<Example>> next = source->Next();
  if (!next.ok()) return Fail(next.status());
  if (absl::Status s = EnsureOpenFileLimit(shards, fmt::format("--shards={}", shards)); !s.ok())
    return Fail(s);
  absl::StatusOr<std::unique_ptr<ShardSet>> out =
      ShardSet::Create(prefix, shards, suffix, writer_options);
  if (!out.ok()) return Fail(out.status());
  int64_t n = 0;
  for (; n < limit; ++n) {
    if (n > 0) next = source->Next();
    if (!next.ok()) return Fail(next.status());  // ~ShardSet removes the partial shards
    if (!next->has_value()) break;
    const Example& e = **next;
    auto payload = EncodeImageRecord(e.components[0], e.label, record_options);
    if (!payload.ok()) return Fail(payload.status());
    if (absl::Status s = (*out)->Write(static_cast<size_t>(n % shards), *payload); !s.ok())
      return Fail(s);
  }
  absl::StatusOr<uint64_t> file_bytes = (*out)->Commit();
  if (!file_bytes.ok()) return Fail(file_bytes.status());
  std::string files;
  for (const std::string& path : (*out)->paths())
    files += (files.empty() ? "" : ", ") + JsonQuote(path);
  std::printf(
      "%s\n",
      fmt::format(
          R"({{"records": {}, "shards": {}, "encoding": "{}", "file_bytes": {}, "files": [{}]}})",
          n, shards, ImageEncodingName(*encoding), *file_bytes, files)
          .c_str());
  return 0;
}

}  // namespace

int ConvertCommand(const std::vector<std::string>& argv) {
  return RunCommand(
      {"convert", kConvertFlags, kConvertUsageHead, kConvertUsageTail, Operands::kNone, Convert},
      argv);
}

}  // namespace dataecho::tool
