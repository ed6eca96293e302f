// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/tfrecord.h"

#include <string>
#include <vector>

#include "dataecho/crc32c.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ExpectCorruptedAt;
using ::dataecho::testing::ReadAllRecords;
using ::dataecho::testing::ReadResult;
using ::dataecho::testing::TempDir;
using ::dataecho::testing::WriteFileOrDie;

ReadResult ReadFiles(std::vector<std::string> uris, TFRecordReaderOptions options = {},
                     InterleaveOptions interleave = {}) {
  auto source = MakeTFRecordSource(OpenObjectStore(), std::move(uris), options, interleave);
  return ReadAllRecords(*source);
}

std::string Payload(int i) {
  return std::string(static_cast<size_t>(i % 50), static_cast<char>('a' + i % 26)) +
         std::to_string(i);
}

std::string Framed(int first, int n) {
  std::string out;
  for (int i = first; i < first + n; ++i) AppendTFRecord(&out, Payload(i));
  return out;
}

TEST(TFRecordTest, KnownBytesOfAnEmptyRecord) {
  std::string out;
  AppendTFRecord(&out, "");
  EXPECT_EQ(out, std::string("\0\0\0\0\0\0\0\0\x29\x03\x98\x07\xd8\xea\x82\xa2", 16));
}

TEST(TFRecordTest, WriterReaderRoundTripAllCompressions) {
  TempDir dir;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    const std::string path = dir.File("rt-" + std::to_string(static_cast<int>(c)));
    auto writer = TFRecordWriter::Create(path, {.compression = c});
    ASSERT_TRUE(writer.ok()) << writer.status();
    std::vector<std::string> payloads = {"", "x",
                                         std::string(300000, 'q')};  // larger than the read buffer
    for (int i = 0; i < 500; ++i) payloads.push_back(Payload(i));
    for (const auto& p : payloads) ASSERT_TRUE((*writer)->Write(p).ok());
    EXPECT_EQ((*writer)->records(), static_cast<int64_t>(payloads.size()));
    ASSERT_TRUE((*writer)->Close().ok());
    if (c == Compression::kNone) {
      std::string expected;
      for (const auto& p : payloads) AppendTFRecord(&expected, p);
      EXPECT_EQ(testing::ReadFileOrDie(path), expected);
    }
    ReadResult r = ReadFiles({path}, {.compression = c, .buffer_size = 4096});
    ASSERT_TRUE(r.status.ok()) << r.status;
    ASSERT_EQ(r.records.size(), payloads.size());
    uint64_t offset = 0;
    for (size_t i = 0; i < payloads.size(); ++i) {
      EXPECT_EQ(r.records[i].data.view(), payloads[i]) << i;
      EXPECT_EQ(r.records[i].offset, offset);
      EXPECT_EQ(r.records[i].source_index, i);
      EXPECT_EQ(r.records[i].uri(), path);
      offset += payloads[i].size() + 16;
    }
    ASSERT_EQ(r.stats.size(), 1u);
    EXPECT_EQ(r.stats[0].name, "tfrecord_source");
    EXPECT_EQ(r.stats[0].elements, static_cast<int64_t>(payloads.size()));
  }
}

TEST(TFRecordTest, AutoCompressionBySuffixAndEmptyFile) {
  TempDir dir;
  WriteFileOrDie(dir.File("a.gz"), testing::Gzip(Framed(0, 10)));
  WriteFileOrDie(dir.File("empty"), "");
  ReadResult r = ReadFiles({dir.File("empty"), dir.File("a.gz"), dir.File("empty")},
                           {.compression = Compression::kAuto});
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.records.size(), 10u);
  EXPECT_EQ(r.records[3].data.view(), Payload(3));
  EXPECT_EQ(r.records[3].source_index, MakeSourceIndex(1, 3));
}

// Every prefix that ends inside a record is "truncated record at uri:offset",
// after the complete records before it.
TEST(TFRecordTest, TruncationAnywhereIsDataLoss) {
  TempDir dir;
  const std::string full = Framed(0, 3);
  const size_t second = Payload(0).size() + 16;
  const size_t third = second + Payload(1).size() + 16;
  for (size_t cut = second + 1; cut < third; ++cut) {
    for (bool gz : {false, true}) {
      const std::string path = dir.File(gz ? "t.gz" : "t");
      WriteFileOrDie(path, gz ? testing::Gzip(full.substr(0, cut)) : full.substr(0, cut));
      ReadResult r = ReadFiles({path}, {.compression = Compression::kAuto});
      ASSERT_EQ(r.records.size(), 1u) << cut;
      ASSERT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << cut;
      EXPECT_NE(
          r.status.message().find("truncated record at " + path + ":" + std::to_string(second)),
          std::string::npos)
          << r.status;
      // skip_corrupt does not hide truncation.
      EXPECT_EQ(ReadFiles({path}, {.compression = Compression::kAuto, .skip_corrupt = true})
                    .status.code(),
                absl::StatusCode::kDataLoss);
    }
  }
}

TEST(TFRecordTest, TruncatedCompressedStreamIsDataLoss) {
  TempDir dir;
  const std::string gz = testing::Gzip(Framed(0, 100));
  WriteFileOrDie(dir.File("t.gz"), gz.substr(0, gz.size() - 6));  // cuts the gzip trailer
  ReadResult r = ReadFiles({dir.File("t.gz")}, {.compression = Compression::kGzip});
  EXPECT_EQ(r.records.size(), 100u);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("truncated"), std::string::npos) << r.status;
  std::string garbled = gz;
  for (size_t i = 20; i < 60; ++i) garbled[i] = static_cast<char>(garbled[i] ^ 0x5a);
  WriteFileOrDie(dir.File("g.gz"), garbled);
  EXPECT_EQ(ReadFiles({dir.File("g.gz")}, {.compression = Compression::kGzip}).status.code(),
            absl::StatusCode::kDataLoss);
}

TEST(TFRecordTest, BadDataCrcFailsOrIsSkippedAndCounted) {
  TempDir dir;
  std::string bytes = Framed(0, 5);
  const size_t r2 = Payload(0).size() + 16 + Payload(1).size() + 16;
  bytes[r2 + 12] ^= 1;  // first payload byte of record 2
  WriteFileOrDie(dir.File("c"), bytes);
  ReadResult strict = ReadFiles({dir.File("c")});
  EXPECT_EQ(strict.records.size(), 2u);
  ExpectCorruptedAt(strict.status, dir.File("c"), r2);

  ReadResult skip = ReadFiles({dir.File("c"), dir.File("c")}, {.skip_corrupt = true});
  ASSERT_TRUE(skip.status.ok()) << skip.status;
  ASSERT_EQ(skip.records.size(), 8u);
  EXPECT_EQ(skip.records[2].data.view(), Payload(3));
  EXPECT_EQ(skip.records[2].source_index, 3u);  // indices stay those of the clean file
  EXPECT_EQ(skip.stats[0].Extra("skipped_corrupt"), 2);

  // The limit: more skips than max_skipped fail.
  ReadResult over = ReadFiles({dir.File("c"), dir.File("c"), dir.File("c")},
                              {.skip_corrupt = true, .max_skipped = 2});
  EXPECT_EQ(over.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(over.status.message().find("too many"), std::string::npos) << over.status;
  EXPECT_EQ(over.records.size(), 10u);
}

TEST(TFRecordTest, BadLengthCrcFailsOrSkipsTheRestOfTheFile) {
  TempDir dir;
  std::string bytes = Framed(0, 5);
  const size_t r1 = Payload(0).size() + 16;
  bytes[r1 + 9] ^= 0x10;  // the masked length CRC of record 1
  WriteFileOrDie(dir.File("l"), bytes);
  WriteFileOrDie(dir.File("ok"), Framed(100, 3));
  ReadResult strict = ReadFiles({dir.File("l")});
  EXPECT_EQ(strict.records.size(), 1u);
  ExpectCorruptedAt(strict.status, dir.File("l"), r1);
  ReadResult skip = ReadFiles({dir.File("l"), dir.File("ok")}, {.skip_corrupt = true});
  ASSERT_TRUE(skip.status.ok()) << skip.status;
  ASSERT_EQ(skip.records.size(), 4u);  // record 0 of l, then all of ok
  EXPECT_EQ(skip.records[1].data.view(), Payload(100));
  EXPECT_EQ(skip.stats[0].Extra("skipped_corrupt"), 1);
}

// A header with a valid CRC but an absurd length must not allocate it.
TEST(TFRecordTest, AbsurdLengthRejectedBeforeAllocating) {
  TempDir dir;
  for (uint64_t length : {uint64_t{1} << 62, (uint64_t{1} << 30) - 1, uint64_t{1} << 40}) {
    std::string header(12, '\0');
    for (int i = 0; i < 8; ++i) header[i] = static_cast<char>(length >> (8 * i));
    const uint32_t crc = MaskCrc32c(Crc32c(header.data(), 8));
    for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>(crc >> (8 * i));
    WriteFileOrDie(dir.File("a"), Framed(0, 1) + header + "tiny");
    ReadResult r = ReadFiles({dir.File("a")});
    EXPECT_EQ(r.records.size(), 1u);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << length;
    // Compressed: the size is unknown, max_record_bytes guards the allocation.
    WriteFileOrDie(dir.File("a.gz"), testing::Gzip(Framed(0, 1) + header + "tiny"));
    ReadResult z = ReadFiles({dir.File("a.gz")},
                             {.compression = Compression::kGzip, .max_record_bytes = 1 << 20});
    EXPECT_EQ(z.status.code(), absl::StatusCode::kDataLoss) << length;
  }
}

// An IDX file (plain or inflated from .gz) or a gzip stream read as TFRecord:
// the DATA_LOSS at offset 0 says what the file looks like and what to use.
TEST(TFRecordTest, IdxOrGzipReadAsTFRecordSaysWhatItLooksLike) {
  TempDir dir;
  const std::string idx("\0\0\x08\x01\0\0\0\x05\x01\x02\x03\x04\x05", 13);
  WriteFileOrDie(dir.File("labels-idx1-ubyte"), idx);
  WriteFileOrDie(dir.File("labels-idx1-ubyte.gz"), testing::Gzip(idx));
  // Shorter than a TFRecord header: truncated, with the same hint.
  WriteFileOrDie(dir.File("short-idx1-ubyte"), idx.substr(0, 11));
  ReadResult short_file = ReadFiles({dir.File("short-idx1-ubyte")});
  EXPECT_NE(short_file.status.message().find(
                ":0 (partial header; this looks like an IDX file: use --format=idx"),
            absl::string_view::npos)
      << short_file.status;
  WriteFileOrDie(dir.File("gzipped"), testing::Gzip(Framed(0, 3)));
  for (const char* name : {"labels-idx1-ubyte", "labels-idx1-ubyte.gz"}) {
    ReadResult r = ReadFiles({dir.File(name)}, {.compression = Compression::kAuto});
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << name;
    EXPECT_NE(r.status.message().find(":0 (length CRC mismatch; this looks like an IDX file: use "
                                      "--format=idx (MakeIdxRecordSource))"),
              absl::string_view::npos)
        << r.status;
  }
  ReadResult gz = ReadFiles({dir.File("gzipped")});
  EXPECT_NE(gz.status.message().find("this looks like a gzip stream"), absl::string_view::npos)
      << gz.status;
  // Corruption further in, or of other bytes, gets no hint.
  std::string bad = Framed(0, 2);
  bad[bad.size() - 20] ^= 1;
  WriteFileOrDie(dir.File("bad"), bad);
  EXPECT_EQ(ReadFiles({dir.File("bad")}).status.message().find("looks like"),
            absl::string_view::npos);
}

TEST(TFRecordTest, MissingFileIsNotFound) {
  TempDir dir;
  EXPECT_EQ(ReadFiles({dir.File("nope")}).status.code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dataecho
