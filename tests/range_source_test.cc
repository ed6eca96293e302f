// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Record ranges read from real files (formats/range_source.h,
// formats/tfrecord_index.h, the fixed-length range reader) and a whole epoch
// plan executed by per-rank sources, with a restart on fewer ranks.
#include "dataecho/formats/range_source.h"

#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/storage/epoch_plan.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/checkpoint_check.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::IndexedPayload;
using testing::WriteIndexedTFRecordFiles;

// Every record of `stage`: its payload, checked against its source index.
std::vector<std::string> Drain(Stage<Record>& stage) {
  std::vector<std::string> out;
  while (true) {
    absl::StatusOr<std::optional<Record>> r = stage.Next();
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok() || !r->has_value()) return out;
    const uint64_t f = (*r)->source_index >> kRecordIndexBits;
    const uint64_t i = (*r)->source_index & ((uint64_t{1} << kRecordIndexBits) - 1);
    EXPECT_EQ((*r)->data.view(), IndexedPayload(f, i));
    out.emplace_back((*r)->data.view());
  }
}

std::vector<std::string> Expected(const RecordRange& r) {
  std::vector<std::string> out;
  for (uint64_t i = r.begin; i < r.end; ++i) out.push_back(IndexedPayload(r.file, i));
  return out;
}

TEST(TFRecordIndexTest, ScansAgreeWithTheWriterAndRoundTripDaliFormat) {
  testing::TempDir dir;
  std::vector<TFRecordIndex> truth;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {0, 1, 57}, &truth);
  std::unique_ptr<ObjectStore> store = OpenObjectStore();
  for (size_t f = 0; f < paths.size(); ++f) {
    for (TFRecordScan scan : {TFRecordScan::kStream, TFRecordScan::kHeaders}) {
      absl::StatusOr<TFRecordIndex> index = ScanTFRecordIndex(*store, paths[f], scan);
      ASSERT_TRUE(index.ok()) << index.status();
      EXPECT_EQ(index->offsets, truth[f].offsets);
    }
    const std::string text = FormatTFRecordIndex(truth[f]);
    absl::StatusOr<TFRecordIndex> parsed = ParseTFRecordIndex(text, "x.idx");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->offsets, truth[f].offsets);
    testing::WriteFileOrDie(paths[f] + ".idx", text);
    absl::StatusOr<TFRecordIndex> read = ReadTFRecordIndex(*store, paths[f] + ".idx");
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->records(), truth[f].records());
  }
  EXPECT_EQ(FormatTFRecordIndex(truth[1]), "0 22\n");  // 12 + "f1-r0" + 1 pad + 4
  EXPECT_THAT(ParseTFRecordIndex("0 22\n30 22\n", "x.idx").status().message(),
              HasSubstr("x.idx:2: record at 30 does not follow"));
  EXPECT_THAT(ParseTFRecordIndex("0 twenty\n", "x.idx").status().message(), HasSubstr("x.idx:1"));
}

TEST(TFRecordIndexTest, ScanReportsTruncationAndCorruptHeaders) {
  testing::TempDir dir;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {5});
  std::string bytes = testing::ReadFileOrDie(paths[0]);
  testing::WriteFileOrDie(paths[0], bytes.substr(0, bytes.size() - 3));
  std::unique_ptr<ObjectStore> store = OpenObjectStore();
  for (TFRecordScan scan : {TFRecordScan::kStream, TFRecordScan::kHeaders}) {
    absl::StatusOr<TFRecordIndex> index = ScanTFRecordIndex(*store, paths[0], scan);
    EXPECT_EQ(index.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(index.status().message(), HasSubstr("truncated record at"));
  }
  bytes[8] ^= 1;  // the first length CRC
  testing::WriteFileOrDie(paths[0], bytes);
  EXPECT_THAT(ScanTFRecordIndex(*store, paths[0]).status().message(),
              HasSubstr("part-00.tfrecord:0 (length CRC mismatch)"));
}

TEST(TFRecordRangeTest, RangesWithAndWithoutIndexAndCompressed) {
  testing::TempDir dir;
  std::vector<TFRecordIndex> truth;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {40, 40}, &truth);
  const std::string gz = dir.File("part-01.tfrecord.gz");
  testing::WriteFileOrDie(gz, testing::Gzip(testing::ReadFileOrDie(paths[1])));
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  const RecordRange range{.file = 1, .begin = 13, .end = 29};
  for (const TFRecordIndex* index : std::vector<const TFRecordIndex*>{&truth[1], nullptr}) {
    for (const std::string& uri : {paths[1], gz}) {
      TFRecordReaderOptions options;
      options.compression = Compression::kAuto;
      absl::StatusOr<std::unique_ptr<RecordFileReader>> reader =
          OpenTFRecordRange(store, uri, range, index, options);
      ASSERT_TRUE(reader.ok()) << reader.status();
      std::vector<std::string> got;
      uint64_t expected_offset = truth[1].offsets[13];
      while (true) {
        absl::StatusOr<std::optional<Record>> r = (*reader)->Next();
        ASSERT_TRUE(r.ok()) << r.status();
        if (!r->has_value()) break;
        EXPECT_EQ((*r)->offset, expected_offset);  // of the uncompressed stream, absolute
        expected_offset += (*r)->data.size() + kTFRecordHeaderBytes + kTFRecordFooterBytes;
        got.emplace_back((*r)->data.view());
      }
      EXPECT_EQ(got, Expected(range)) << uri << (index ? " with index" : " without index");
    }
  }
  EXPECT_THAT(OpenTFRecordRange(store, paths[1], {.file = 1, .begin = 0, .end = 41}, &truth[1])
                  .status()
                  .message(),
              HasSubstr("its index has 40 records"));
}

// Over HTTP a range with an index is one request for exactly its bytes.
TEST(TFRecordRangeTest, OneRangedRequestOfExactlyTheRangesBytes) {
  testing::TempDir dir;
  std::vector<TFRecordIndex> truth;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {100}, &truth);
  absl::StatusOr<std::unique_ptr<testing::HttpServer>> server =
      testing::HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status();
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  const std::string uri = (*server)->url() + "/part-00.tfrecord";
  StagePtr<Record> source =
      MakeTFRecordRangeSource(store, {uri}, {{.file = 0, .begin = 20, .end = 60}},
                              std::make_shared<const std::vector<TFRecordIndex>>(truth));
  EXPECT_EQ(Drain(*source), Expected({.file = 0, .begin = 20, .end = 60}));
  std::vector<std::string> ranges;
  for (const testing::HttpRequestLog& log : (*server)->requests()) {
    if (log.method == "GET")
      ranges.push_back(log.headers.count("range") ? log.headers.at("range") : "");
  }
  EXPECT_THAT(ranges, ElementsAre(fmt::format("bytes={}-{}", truth[0].offsets[20],
                                              truth[0].offsets[60] - 1)));
  // An empty range reads nothing and is no error.
  StagePtr<Record> empty =
      MakeTFRecordRangeSource(store, {uri}, {{.file = 0, .begin = 7, .end = 7}},
                              std::make_shared<const std::vector<TFRecordIndex>>(truth));
  EXPECT_TRUE(Drain(*empty).empty());
}

TEST(FixedLengthRangeTest, CountsAndRanges) {
  testing::TempDir dir;
  constexpr uint64_t kRecord = 5;
  std::string bytes = "HDR";  // 3 header bytes, 50 records, 2 footer bytes
  for (int i = 0; i < 50; ++i) bytes += fmt::format("r{:04}", i);
  bytes += "FT";
  const std::string path = dir.File("fixed.bin");
  testing::WriteFileOrDie(path, bytes);
  testing::WriteFileOrDie(path + ".gz", testing::Gzip(bytes));
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  FixedLengthOptions options{.record_bytes = kRecord, .header_bytes = 3, .footer_bytes = 2};
  for (const std::string& uri : {path, path + ".gz"}) {
    options.compression = Compression::kAuto;
    absl::StatusOr<uint64_t> count = CountFixedLengthRecords(*store, uri, options);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, 50u);
    for (RecordRange range : {RecordRange{0, 0, 7}, RecordRange{0, 48, 50}, RecordRange{0, 9, 9}}) {
      StagePtr<Record> source = MakeFixedLengthRangeSource(store, {uri}, {range}, options);
      std::vector<std::string> got;
      std::vector<uint64_t> offsets;
      while (true) {
        absl::StatusOr<std::optional<Record>> r = source->Next();
        ASSERT_TRUE(r.ok()) << r.status();
        if (!r->has_value()) break;
        got.emplace_back((*r)->data.view());
        offsets.push_back((*r)->offset);
        EXPECT_EQ((*r)->source_index, MakeSourceIndex(0, range.begin + got.size() - 1));
      }
      std::vector<std::string> want;
      std::vector<uint64_t> want_offsets;
      for (uint64_t i = range.begin; i < range.end; ++i) {
        want.push_back(fmt::format("r{:04}", i));
        want_offsets.push_back(3 + i * kRecord);
      }
      EXPECT_EQ(got, want) << uri;
      EXPECT_EQ(offsets, want_offsets) << uri;
    }
  }
  // A plan that claims more records than the file holds: DATA_LOSS, not silence.
  StagePtr<Record> beyond = MakeFixedLengthRangeSource(store, {path}, {{0, 45, 60}}, options);
  absl::Status status;
  while (status.ok()) {
    absl::StatusOr<std::optional<Record>> r = beyond->Next();
    if (!r.ok()) status = r.status();
    if (r.ok() && !r->has_value()) break;
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
}

// The records a reader returns, and how it ended (OK at a clean end).
absl::Status ReadAll(RecordFileReader& reader, std::vector<std::string>* got) {
  while (true) {
    absl::StatusOr<std::optional<Record>> r = reader.Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) return absl::OkStatus();
    got->emplace_back((*r)->data.view());
  }
}

// A range past the end of its file (the file shorter than the plan, or than
// its index) fails after the records it has, naming the file and offset:
// never a silently short range. Every way of reading a range.
TEST(TFRecordRangeTest, RangePastTheEndOfTheFileIsDataLoss) {
  testing::TempDir dir;
  std::vector<TFRecordIndex> longer;  // the index of 60 records
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {60}, &longer);
  const std::string whole = testing::ReadFileOrDie(paths[0]);
  const uint64_t end_of_40 = longer[0].offsets[40];
  testing::WriteFileOrDie(paths[0], whole.substr(0, end_of_40));  // 40 records left
  const std::string gz = paths[0] + ".gz";
  testing::WriteFileOrDie(gz, testing::Gzip(whole.substr(0, end_of_40)));
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  TFRecordReaderOptions options;
  options.compression = Compression::kAuto;
  struct Case {
    std::string uri;
    RecordRange range;
    const TFRecordIndex* index;
    size_t records;  // delivered before the error
  };
  for (const Case& c : std::vector<Case>{{paths[0], {0, 30, 50}, nullptr, 10},
                                         {paths[0], {0, 30, 50}, &longer[0], 10},
                                         {paths[0], {0, 45, 50}, &longer[0], 0},
                                         {paths[0], {0, 45, 50}, nullptr, 0},
                                         {gz, {0, 30, 50}, nullptr, 10},
                                         {gz, {0, 30, 50}, &longer[0], 10}}) {
    SCOPED_TRACE(fmt::format("{} [{}, {}) {}", c.uri, c.range.begin, c.range.end,
                             c.index ? "with index" : "without index"));
    absl::StatusOr<std::unique_ptr<RecordFileReader>> reader =
        OpenTFRecordRange(store, c.uri, c.range, c.index, options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::vector<std::string> got;
    absl::Status status = ReadAll(**reader, &got);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(status.message(), HasSubstr(fmt::format("{}:{}", c.uri, end_of_40)));
    EXPECT_THAT(status.message(), HasSubstr("is cut short"));
    EXPECT_EQ(got.size(), c.records);
  }
  // The same through a source: the records, then the error (sticky).
  StagePtr<Record> source = MakeTFRecordRangeSource(
      store, paths, {{0, 35, 45}}, std::make_shared<const std::vector<TFRecordIndex>>(longer));
  std::vector<std::string> got;
  absl::StatusOr<std::optional<Record>> r;
  while ((r = source->Next()).ok() && r->has_value()) got.emplace_back((*r)->data.view());
  EXPECT_EQ(got, Expected({0, 35, 40}));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_EQ(source->Next().status().code(), absl::StatusCode::kDataLoss);
  // A range that ends at the file's end is no error.
  absl::StatusOr<std::unique_ptr<RecordFileReader>> exact =
      OpenTFRecordRange(store, gz, {0, 30, 40}, nullptr, options);
  ASSERT_TRUE(exact.ok());
  got.clear();
  EXPECT_TRUE(ReadAll(**exact, &got).ok());
  EXPECT_EQ(got, Expected({0, 30, 40}));
}

TEST(RangeSourceTest, LimitToRangePastTheEndOfTheFileIsDataLoss) {
  testing::TempDir dir;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {40});
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  for (RecordRange range : {RecordRange{0, 30, 50}, RecordRange{0, 30, 40}}) {
    absl::StatusOr<std::unique_ptr<RecordFileReader>> whole =
        OpenTFRecordFile(store, paths[0], 0, {});
    ASSERT_TRUE(whole.ok()) << whole.status();
    std::unique_ptr<RecordFileReader> reader = LimitToRange(*std::move(whole), range);
    std::vector<std::string> got;
    absl::Status status = ReadAll(*reader, &got);
    EXPECT_EQ(got, Expected({0, 30, 40}));
    if (range.end == 40) {
      EXPECT_TRUE(status.ok()) << status;
      continue;
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(status.message(), HasSubstr("record range [30, 50) of " + paths[0]));
    EXPECT_THAT(status.message(), HasSubstr("after 40 records"));
  }
}

TEST(FixedLengthRangeTest, CompressedFileShorterThanTheRangeIsDataLoss) {
  testing::TempDir dir;
  std::string bytes;
  for (int i = 0; i < 50; ++i) bytes += fmt::format("r{:04}", i);
  const std::string path = dir.File("fixed.bin.gz");
  testing::WriteFileOrDie(path, testing::Gzip(bytes));
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  const FixedLengthOptions options{.record_bytes = 5, .compression = Compression::kAuto};
  for (RecordRange range : {RecordRange{0, 45, 60}, RecordRange{0, 55, 60}}) {
    absl::StatusOr<std::unique_ptr<RecordFileReader>> reader =
        OpenFixedLengthRange(store, path, range, options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::vector<std::string> got;
    absl::Status status = ReadAll(**reader, &got);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(status.message(), HasSubstr(path + ":250"));
    EXPECT_EQ(got.size(), range.begin < 50 ? 50 - range.begin : 0);
  }
}

// A range naming a file the source does not have fails in its place.
TEST(RangeSourceTest, RangeNamingNoFileFailsInOrder) {
  testing::TempDir dir;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, {3});
  StagePtr<Record> source = MakeTFRecordRangeSource(
      OpenObjectStore(), paths,
      {{.file = 0, .begin = 0, .end = 2}, {.file = 4, .begin = 0, .end = 1}}, nullptr);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(source->Next().ok());
  absl::StatusOr<std::optional<Record>> r = source->Next();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("names file 4, the source has 1 files"));
}

// An epoch plan executed by real per-rank sources: 3 ranks that stop after
// 40 records each, then 2 ranks to the end; every record exactly once. A run
// that stops must read its ranges in order (cycle_length 1); the last run
// reads everything, so its ranks may interleave them.
TEST(PlannedSourcesTest, RestartOnFewerRanksReadsEveryRecordOnce) {
  testing::TempDir dir;
  const std::vector<uint64_t> counts = {31, 0, 77, 12, 45};
  std::vector<TFRecordIndex> truth;
  std::vector<std::string> paths = WriteIndexedTFRecordFiles(dir, counts, &truth);
  auto indexes = std::make_shared<const std::vector<TFRecordIndex>>(truth);
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  const EpochPlanOptions options{.seed = 5, .mode = ShardMode::kRecords};
  std::multiset<std::string> seen;
  EpochProgress progress{.epoch = 2};
  for (int world : {3, 2}) {
    const bool last = world == 2;
    for (int rank = 0; rank < world; ++rank) {
      absl::StatusOr<std::vector<RecordRange>> mine =
          PlanRank(counts, options, progress, rank, world);
      ASSERT_TRUE(mine.ok()) << mine.status();
      InterleaveOptions interleave;
      interleave.cycle_length = last && rank == 0 ? 2 : 1;
      StagePtr<Record> source =
          MakeTFRecordRangeSource(store, paths, *mine, indexes, {}, interleave);
      for (int taken = 0; last || taken < 40; ++taken) {
        absl::StatusOr<std::optional<Record>> r = source->Next();
        ASSERT_TRUE(r.ok()) << r.status();
        if (!r->has_value()) break;
        seen.insert(std::string((*r)->data.view()));
      }
    }
    progress.runs.push_back({.world_size = world, .position = 120});
  }
  std::multiset<std::string> want;
  for (uint64_t f = 0; f < counts.size(); ++f) {
    for (std::string& p : Expected({f, 0, counts[f]})) want.insert(std::move(p));
  }
  EXPECT_EQ(seen, want);
}

}  // namespace
}  // namespace dataecho
