// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fuzz_targets.h: the bodies of the libFuzzer targets (tests/fuzz/*_fuzz.cc).
// The same functions run every committed corpus input in the regular suite
// (tests/fuzz_corpus_test.cc), so an input that once crashed a target stays a
// regression test in every build, sanitizer builds included.
//
// Each function must return normally for any input: records and then a clean
// end, or a status. A crash, a leak, undefined behaviour or std::abort() (a
// reader that spins) is a failure.
#ifndef DATAECHO_TESTS_FUZZ_FUZZ_TARGETS_H_
#define DATAECHO_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dataecho/checkpoint_dir.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "fuzz_file.h"
#include "fuzz_state.h"
#include "storage/remote_store.h"
#include "storage/uri.h"

namespace dataecho::fuzz {

inline const std::shared_ptr<ObjectStore>& LocalStore() {
  static const auto* store = new std::shared_ptr<ObjectStore>(OpenObjectStore());
  return *store;
}

// TFRecord: the input is a file (plain; also read as gzip and zlib), read with
// and without skip_corrupt.
inline void TFRecordTarget(const uint8_t* data, size_t size) {
  const std::string path = WriteScratch("tfrecord", data, size);
  auto read_all = [&path](const TFRecordReaderOptions& options) {
    auto source = MakeTFRecordSource(LocalStore(), {path}, options);
    for (int i = 0; i < 1 << 20; ++i) {
      auto next = source->Next();
      if (!next.ok() || !next->has_value()) return;
    }
    std::abort();  // more records than the input could hold: the reader spins
  };
  for (bool skip : {false, true}) {
    TFRecordReaderOptions options;
    options.skip_corrupt = skip;
    options.max_skipped = 100;
    options.max_record_bytes = 1 << 24;
    options.buffer_size = 4096;  // small buffers: many refills, fast runs
    options.read_ahead = 4096;
    read_all(options);
    options.compression = Compression::kGzip;
    read_all(options);
  }
  TFRecordReaderOptions zlib;
  zlib.compression = Compression::kZlib;
  zlib.max_record_bytes = 1 << 24;
  zlib.buffer_size = 4096;
  zlib.read_ahead = 4096;
  read_all(zlib);
}

// IDX: the header parser on the raw input, the row reader on the input as a
// file (plain and gzip), and the images+labels zip with the input as images.
inline void IdxTarget(const uint8_t* data, size_t size) {
  (void)ParseIdxHeader(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  const std::string path = WriteScratch("idx", data, size);
  for (Compression c : {Compression::kNone, Compression::kGzip}) {
    auto rows = MakeIdxRecordSource(LocalStore(), {path},
                                    {.compression = c, .buffer_size = 4096, .read_ahead = 4096});
    while (true) {
      auto next = rows->Next();
      if (!next.ok() || !next->has_value()) break;
    }
  }
  static const uint8_t kLabels[] = {0, 0, 8, 1, 0, 0, 0, 2, 1, 2};
  const std::string labels = WriteScratch("labels", kLabels, sizeof(kLabels));
  auto examples =
      MakeIdxSource(LocalStore(), path, labels,
                    {.compression = Compression::kNone, .buffer_size = 4096, .read_ahead = 4096});
  while (true) {
    auto next = examples->Next();
    if (!next.ok() || !next->has_value()) break;
  }
}

// JPEG (as stored, gray, RGB) and image-record decoding.
inline void JpegTarget(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int channels : {0, 1, 3}) {
    JpegDecodeOptions options;
    options.channels = channels;
    options.max_pixels = 1 << 22;
    auto image = DecodeJpeg(bytes, options, "fuzz");
    if (image.ok() && image->byte_size() != static_cast<size_t>(image->num_elements()))
      std::abort();
  }
  (void)DecodeImageRecordPayload(bytes, "fuzz");
}

// Checkpoint files: the input is a file's bytes. A parse that succeeds must
// give sections whose sizes add up to the file, and encode back to the same
// bytes.
inline void CheckpointTarget(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Checkpoint> c = CheckpointDir::Parse("fuzz", bytes);
  if (!c.ok()) {
    if (c.status().code() != absl::StatusCode::kDataLoss) std::abort();
    return;
  }
  std::vector<CheckpointSection> sections;
  for (const auto& [name, body] : c->sections) sections.push_back({name, absl::Cord(body)});
  if (CheckpointDir::Encode(c->step, sections) != bytes) std::abort();
}

// URIs: splitting, redaction, key encoding, glob detection and escapes. The
// redacted form must hold no userinfo and be a fixed point; the encoded key
// must have no '.' or '..' segment left for a client to resolve.
inline void UriTarget(const uint8_t* data, size_t size) {
  const std::string_view uri(reinterpret_cast<const char*>(data), size);
  (void)internal::UriScheme(uri);
  (void)internal::SplitBucketUri(uri);
  (void)internal::LocalPath(uri);
  const std::string redacted = RedactUri(uri);
  if (RedactUri(redacted) != redacted) std::abort();
  const std::string encoded = internal::EncodeKeyPath(uri);
  size_t start = 0;
  while (true) {
    const size_t slash = encoded.find('/', start);
    const std::string_view segment = std::string_view(encoded).substr(start, slash - start);
    if (segment == "." || segment == "..") std::abort();
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const size_t glob = internal::GlobStart(uri);
  if (glob != std::string_view::npos && glob >= uri.size()) std::abort();
  if (IsGlob(uri) != (glob != std::string_view::npos)) std::abort();
  (void)internal::GlobUnescape(uri);
  (void)GlobMatch(uri, uri);
}

// A listing page parsed by `parse`: every entry is a URI under `prefix`.
template <typename Parse>
void ListingTarget(const uint8_t* data, size_t size, Parse parse, std::string_view prefix) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto page = parse(text, "bucket");
  if (!page.ok()) return;
  for (const ObjectInfo& info : page->objects) {
    if (!info.uri.starts_with(prefix)) std::abort();
  }
}

// An S3 ListObjectsV2 page (XML).
inline void S3ListingTarget(const uint8_t* data, size_t size) {
  ListingTarget(data, size, internal::ParseS3ListPage, "s3://bucket/");
}

// A Cloud Storage objects.list page (JSON).
inline void GcsListingTarget(const uint8_t* data, size_t size) {
  ListingTarget(data, size, internal::ParseGcsListPage, "gs://bucket/");
}

// Pipeline states (checkpoint.h): the input is restored into two small
// in-memory pipelines, as it is and with a valid checksum appended (so that
// the stages' own parsers see it), and a restored pipeline is read to its end.
inline Pipeline<Batch> StateFuzzBatches() {
  std::vector<Example> examples;
  for (uint64_t i = 0; i < 40; ++i) {
    MutableBuffer mb(4);
    for (size_t j = 0; j < 4; ++j) mb.data()[j] = static_cast<uint8_t>(i + j);
    Example e;
    e.components.push_back(*Tensor::Make(DType::kUInt8, {4}, std::move(mb).Freeze()));
    e.source_index = i;
    examples.push_back(std::move(e));
  }
  return FromVector(std::move(examples))
      .Repeat(2)
      .Echo({.factor = 2.5, .seed = 1})
      .Shuffle({.buffer_size = 16, .seed = 2})
      .Batch({.batch_size = 5})
      .Echo({.factor = 1.5, .seed = 3, .name = "batch_echo"});
}
// A parallel Map and Prefetches (symbolic state: snapshots and skip counts).
inline Pipeline<int64_t> StateFuzzMapped() {
  return FromRange(0, 30)
      .Repeat(2)
      .Map([](int64_t v) { return v * 3; }, {.parallelism = 2, .name = "triple"})
      .Prefetch({.depth = 4})
      .Echo({.factor = 1.5})
      .Shuffle({.buffer_size = 7})
      .Prefetch({.depth = 2, .name = "prefetch_out"});
}
inline Pipeline<int64_t> StateFuzzNumbers() {
  return FromRange(0, 30).Repeat(2).Echo({.factor = 1.5}).Shuffle({.buffer_size = 7}).Take(70);
}
inline void StateTarget(const uint8_t* data, size_t size) {
  for (const std::string& state : StatesOf(data, size)) {
    RestoreAndDrain(StateFuzzBatches(), state);
    RestoreAndDrain(StateFuzzNumbers(), state);
    RestoreAndDrain(StateFuzzMapped(), state);
  }
}

}  // namespace dataecho::fuzz

#endif  // DATAECHO_TESTS_FUZZ_FUZZ_TARGETS_H_
