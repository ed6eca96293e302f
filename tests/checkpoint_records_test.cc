// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Checkpoints of record sources: the restore's ranged reads, the files'
// fingerprints (a changed file is DATA_LOSS naming it), states of format
// version 2, and sources with cycle_length > 1 (reading threads).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "dataecho/checkpoint.h"
#include "dataecho/crc32c.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/checkpoint_check.h"
#include "support/examples.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using testing::CheckResumes;
using testing::Rest;
using testing::Store;
using testing::WriteTFRecordFiles;

// --- record sources: ranged restore, file fingerprints, older states ---

// One file of `records` TFRecords of `bytes` bytes each (distinct contents).
std::string WriteBigFile(const testing::TempDir& dir, const std::string& name, int records,
                         size_t bytes) {
  std::string out;
  for (int r = 0; r < records; ++r) {
    std::string payload = fmt::format("{} record {} ", name, r);
    payload.resize(bytes, static_cast<char>('a' + r % 26));
    AppendTFRecord(&out, payload);
  }
  const std::string path = dir.File(name);
  testing::WriteFileOrDie(path, out);
  return path;
}

TEST(CheckpointRecordsTest, RestoreReadsFarApartRecordsOfLargeFiles) {
  // 2 files of 3 MB: a shuffle buffer of 300 records spread over them, read
  // again with several ranged reads (records 256 KB apart are not coalesced).
  testing::TempDir dir;
  const std::vector<std::string> paths = {WriteBigFile(dir, "a.tfrecord", 400, 7000),
                                          WriteBigFile(dir, "b.tfrecord", 400, 7000)};
  EXPECT_EQ(CheckResumes<Record>(
                [&] {
                  return From(MakeTFRecordSource(Store(), paths))
                      .Echo({.factor = 1.0})
                      .Shuffle({.buffer_size = 300, .seed = 9})
                      .Take(500);
                },
                6),
            500u);
  // One record in 40 (280 KB apart): each buffered record is its own read.
  EXPECT_EQ(CheckResumes<Record>(
                [&] {
                  return From(MakeTFRecordSource(Store(), paths))
                      .Filter([](const Record& r) { return (r.source_index & 0xffff) % 40 == 0; })
                      .Shuffle({.buffer_size = 12, .seed = 9});
                },
                8),
            20u);
}

// The restore reads the records it needs where they are: over HTTP, the bytes
// it asks for are those near the buffered records (and the file's head, for
// its fingerprint), not the file from its start.
TEST(CheckpointRecordsTest, RestoreAsksOnlyForTheBytesNearTheBufferedRecords) {
  testing::TempDir dir;
  const std::string path = WriteBigFile(dir, "big.tfrecord", 400, 7000);
  absl::StatusOr<std::unique_ptr<testing::HttpServer>> server =
      testing::HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string uri = (*server)->url() + "/big.tfrecord";
  auto make = [&] {
    return From(MakeTFRecordSource(Store(), {uri}, {.read_ahead = 256 << 10}))
        .Shuffle({.buffer_size = 8, .seed = 1});
  };
  Pipeline<Record> p = make();
  for (int i = 0; i < 380; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  const size_t before = (*server)->requests().size();
  Pipeline<Record> q = make();
  ASSERT_TRUE(q.RestoreState(*state).ok());
  const std::vector<testing::HttpRequestLog> log = (*server)->requests();
  uint64_t asked = 0;
  for (size_t i = before; i < log.size(); ++i) {
    if (log[i].method != "GET") continue;
    auto range = log[i].headers.find("range");
    ASSERT_NE(range, log[i].headers.end()) << "a GET of the whole file";
    uint64_t first = 0, last = 0;
    ASSERT_EQ(std::sscanf(range->second.c_str(), "bytes=%lu-%lu", &first, &last), 2)
        << range->second;
    asked += last - first + 1;
  }
  const uint64_t size = 400 * (7000 + 16);
  EXPECT_LT(asked, size / 4) << "of " << size;
  EXPECT_EQ(Rest(q), Rest(p));
}

std::string ReadAll(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string out;
  char buf[4096];
  size_t n = 0;
  while (f != nullptr && (n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  if (f != nullptr) std::fclose(f);
  return out;
}

// Over HTTP the restore reopens the file the source's position is in while
// the later stages read their buffered records again (the restore's end waits
// for it): every request for that file waits in the server until a request
// for the other file has come, which only a restore that does both at once
// sends (one that did them one after the other would wait out the timeout).
// The restored pipeline yields what the saved one does.
TEST(CheckpointRecordsTest, RestoreOverHttpReopensTheSourceWhileRereadingTheBuffer) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 100);
  absl::Mutex mu;
  bool armed = false;
  bool part0_asked = false;
  bool timed_out = false;
  absl::StatusOr<std::unique_ptr<testing::HttpServer>> server =
      testing::HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetRoute([&](const testing::HttpRequestLog& r) -> std::optional<testing::HttpReply> {
    absl::MutexLock lock(&mu);
    if (!armed) return std::nullopt;
    if (r.path.find("part-0") != std::string::npos) part0_asked = true;
    if (r.path.find("part-1") != std::string::npos && !timed_out &&
        !mu.AwaitWithTimeout(absl::Condition(&part0_asked), absl::Seconds(20))) {
      timed_out = true;  // (once: the test fails, the rest goes on)
    }
    return std::nullopt;
  });
  const std::vector<std::string> uris = {(*server)->url() + "/part-0.tfrecord",
                                         (*server)->url() + "/part-1.tfrecord"};
  auto make = [&] {
    return From(MakeTFRecordSource(Store(), uris)).Shuffle({.buffer_size = 20, .seed = 5});
  };
  Pipeline<Record> p = make();
  for (int i = 0; i < 90; ++i) ASSERT_TRUE(p.Next().ok());  // 110 pulled: in part-1
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  Pipeline<Record> q = make();
  {
    absl::MutexLock lock(&mu);
    armed = true;
  }
  absl::Status s = q.RestoreState(*state);
  {
    absl::MutexLock lock(&mu);
    armed = false;
    EXPECT_FALSE(timed_out) << "the source's file was reopened before the buffer was read again";
    EXPECT_TRUE(part0_asked);
  }
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Rest(q), Rest(p));
}

// A file changed under a restore, found by the fingerprint checks that run
// beside the reads (a buffered record far from the file's head) or by the
// reopening of the source's file (deferred to the restore's end): DATA_LOSS
// naming the file, from RestoreState() itself.
TEST(CheckpointRecordsTest, ChangedFileFoundBesideTheReadsIsDataLossFromRestoreState) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 100);
  auto make = [&] {
    return From(MakeTFRecordSource(Store(), paths))
        .Filter([](const Record& r) { return (r.source_index & 0xffff) >= 50; })
        .Shuffle({.buffer_size = 10, .seed = 5});
  };
  Pipeline<Record> p = make();
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(p.Next().ok());  // buffered: records >= 50; in part-1
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  for (const std::string& changed : {paths[0], paths[1]}) {
    const std::string original = ReadAll(changed);
    std::string bytes = original;
    std::string other;
    AppendTFRecord(&other, "FILE X RECORD 0 ");  // record 0's length, other bytes
    ASSERT_EQ(bytes.substr(0, 8), other.substr(0, 8));
    bytes.replace(0, other.size(), other);
    testing::WriteFileOrDie(changed, bytes);
    testing::ExpectRestoreIsDataLoss<Record>(
        make, *state, {std::filesystem::path(changed).filename().string(), "first"});
    testing::WriteFileOrDie(changed, original);
  }
  Pipeline<Record> q = make();
  ASSERT_TRUE(q.RestoreState(*state).ok());
  EXPECT_EQ(Rest(q), Rest(p));
}

TEST(CheckpointRecordsTest, FileThatChangedSizeIsDataLossNamingIt) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 30);
  auto make = [&] { return From(MakeTFRecordSource(Store(), paths)).Shuffle({.buffer_size = 5}); };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 3);
  ASSERT_TRUE(state.ok()) << state.status();
  // The same records, and one more at the end.
  std::string bytes = ReadAll(paths[0]);
  AppendTFRecord(&bytes, "appended");
  testing::WriteFileOrDie(paths[0], bytes);
  testing::ExpectRestoreIsDataLoss<Record>(make, *state, {"part-0.tfrecord", "bytes"});
}

TEST(CheckpointRecordsTest, FileWhoseHeadChangedIsDataLossNamingIt) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 1, 40);
  auto make = [&] { return From(MakeTFRecordSource(Store(), paths)); };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 25);
  ASSERT_TRUE(state.ok()) << state.status();
  {
    Pipeline<Record> q = make();
    ASSERT_TRUE(q.RestoreState(*state).ok());
  }
  // Record 0 rewritten with other bytes of the same length: the records the
  // position needs (24, then 25 on) are unchanged, the head is not.
  std::string bytes = ReadAll(paths[0]);
  std::string other;
  AppendTFRecord(&other, "FILE 0 RECORD 0 ");
  ASSERT_EQ(bytes.substr(0, 8), other.substr(0, 8));  // same length
  bytes.replace(0, other.size(), other);
  testing::WriteFileOrDie(paths[0], bytes);
  testing::ExpectRestoreIsDataLoss<Record>(make, *state, {"part-0.tfrecord", "first"});
}

// A shard replaced under a state is reported as a changed file (its size or
// its head), with a Prefetch between the source and the state or without:
// never a count of records that misleads ("has 0 records, the state says at
// least 1", which a restore that reopened the new, shorter file at the saved
// offset gave before it checked the file's fingerprint).
TEST(CheckpointRecordsTest, AReplacedShardIsAChangedFileOnEveryPath) {
  for (bool prefetch : {false, true}) {
    for (int replacement_records : {0, 1, 5, 20}) {
      SCOPED_TRACE(
          fmt::format("prefetch {}, replaced by {} records", prefetch, replacement_records));
      testing::TempDir dir;
      const std::vector<std::string> paths = WriteTFRecordFiles(dir, 4, 20);
      auto make = [&] {
        Pipeline<Record> p = From(MakeTFRecordSource(Store(), paths));
        return prefetch ? std::move(p).Prefetch({.depth = 8}) : std::move(p);
      };
      absl::StatusOr<std::string> state = testing::SaveAfter(make(), 30);  // 10 into part-1
      ASSERT_TRUE(state.ok()) << state.status();
      std::string other;
      for (int r = 0; r < replacement_records; ++r)
        AppendTFRecord(&other, fmt::format("new {}", r));
      testing::WriteFileOrDie(paths[1], other);
      Pipeline<Record> q = make();
      absl::Status s = q.RestoreState(*state);
      while (s.ok()) {  // a restore may find it at the first pull
        absl::StatusOr<std::optional<Record>> next = q.Next();
        if (!next.ok()) s = next.status();
        if (next.ok() && !next->has_value()) break;
      }
      EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
      EXPECT_EQ(s.message().find("the state says at least"), std::string::npos) << s;
      if (!prefetch || s.message().find("part-1.tfrecord") != std::string::npos) {
        // The source's own check (without a Prefetch, or behind one whose
        // snapshot was taken in part-1): the file, and that it changed.
        EXPECT_NE(s.message().find("part-1.tfrecord"), std::string::npos) << s;
        EXPECT_NE(s.message().find("the file changed"), std::string::npos) << s;
      } else {
        // Behind a Prefetch whose snapshot was taken before part-1: the
        // records made again since differ from those the consumer took.
        EXPECT_NE(s.message().find("the input's files changed"), std::string::npos) << s;
      }
    }
  }
}

// A state of format version 2 (before fingerprints and the position's
// offset), written by hand for a record source alone: still read.
TEST(CheckpointRecordsTest, Version2StateOfARecordSourceIsRead) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 10);
  auto make = [&] { return From(MakeTFRecordSource(Store(), paths)); };
  Pipeline<Record> p = make();
  Record last;
  for (int i = 0; i < 14; ++i) {
    absl::StatusOr<std::optional<Record>> next = p.Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    last = **next;
  }
  absl::StatusOr<std::string> v3 = p.SaveState();
  ASSERT_TRUE(v3.ok()) << v3.status();
  absl::StatusOr<StateReader> parsed = StateReader::Parse(*v3);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->shape().size(), 1u);
  // "DEST" 2 | 1 stage | name, hash | payload: epoch 0, next file 2, open,
  // 4 records taken, the last one's CRC.
  std::string payload = {0, 2, 1, 4};
  const uint32_t crc = last.PayloadCrc32c();
  for (int i = 0; i < 4; ++i) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  std::string v2 = "DEST";
  v2.push_back(2);
  v2.push_back(1);
  const StageShape& shape = parsed->shape()[0];
  v2.push_back(static_cast<char>(shape.name.size()));
  v2 += shape.name;
  for (int i = 0; i < 8; ++i)
    v2.push_back(static_cast<char>((shape.options_hash >> (8 * i)) & 0xff));
  v2.push_back(static_cast<char>(payload.size()));
  v2 += payload;
  const uint32_t state_crc = MaskCrc32c(Crc32c(v2));
  for (int i = 0; i < 4; ++i) v2.push_back(static_cast<char>((state_crc >> (8 * i)) & 0xff));
  Pipeline<Record> old = make();
  absl::Status s = old.RestoreState(v2);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Rest(old), Rest(p));
}

// --- record sources with cycle_length > 1 (reading threads) ---

// Files of 0, 1, ... records (file 2 is empty).
std::vector<std::string> UnevenFiles(const testing::TempDir& dir, int files) {
  std::vector<std::string> paths;
  for (int f = 0; f < files; ++f) {
    std::string bytes;
    const int records = f == 2 ? 0 : 3 + (f * 5) % 11;
    for (int r = 0; r < records; ++r) AppendTFRecord(&bytes, fmt::format("f{} r{}", f, r));
    paths.push_back(dir.File(fmt::format("uneven-{}.tfrecord", f)));
    testing::WriteFileOrDie(paths.back(), bytes);
  }
  return paths;
}

TEST(CheckpointRecordsTest, InterleavedRecordSourceResumes) {
  testing::TempDir dir;
  const std::vector<std::string> paths = UnevenFiles(dir, 7);
  for (int cycle : {2, 3, 16}) {
    for (size_t buffered : {size_t{1}, size_t{4}}) {
      SCOPED_TRACE(fmt::format("cycle_length {} buffered_records {}", cycle, buffered));
      InterleaveOptions interleave{.cycle_length = cycle, .buffered_records = buffered};
      EXPECT_GT(CheckResumes<Record>([&] {
                  return From(MakeTFRecordSource(Store(), paths, {}, interleave))
                      .Echo({.factor = 1.5, .seed = 2})
                      .Shuffle({.buffer_size = 5, .seed = 3});
                }),
                50u);
    }
  }
}

TEST(CheckpointRecordsTest, InterleavedRecordSourceRepeatsWithNewFileOrders) {
  testing::TempDir dir;
  const std::vector<std::string> paths = UnevenFiles(dir, 6);
  InterleaveOptions interleave{.cycle_length = 3, .file_order_seed = 7};
  EXPECT_GT(CheckResumes<Record>([&] {
              return From(MakeTFRecordSource(Store(), paths, {}, interleave)).Repeat(3).Take(100);
            }),
            90u);
}

TEST(CheckpointRecordsTest, NonDeterministicInterleavedSourceResumesExactlyOnce) {
  // Any order, but every record of the epoch exactly once across the save.
  testing::TempDir dir;
  const std::vector<std::string> paths = UnevenFiles(dir, 6);
  InterleaveOptions interleave{.cycle_length = 3, .deterministic = false};
  auto make = [&] { return From(MakeTFRecordSource(Store(), paths, {}, interleave)); };
  Pipeline<Record> whole = make();
  std::vector<std::string> all = Rest(whole);
  std::sort(all.begin(), all.end());
  for (size_t k : {size_t{0}, size_t{5}, size_t{17}, all.size()}) {
    std::vector<std::string> got = testing::KeysAcrossSave<Record>(make, k);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, all) << "saved after " << k;
  }
}

TEST(CheckpointRecordsTest, InterleavedSourceStateOfAnotherCycleLengthIsInvalidArgument) {
  testing::TempDir dir;
  const std::vector<std::string> paths = UnevenFiles(dir, 6);
  Pipeline<Record> p = From(MakeTFRecordSource(Store(), paths, {}, {.cycle_length = 3}));
  ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  for (int cycle : {1, 2}) {
    Pipeline<Record> q = From(MakeTFRecordSource(Store(), paths, {}, {.cycle_length = cycle}));
    absl::Status s = q.RestoreState(*state);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
}

}  // namespace
}  // namespace dataecho
