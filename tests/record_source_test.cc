// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/record_source.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/resume_check.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::TempDir;

// File f holds records "f:0", "f:1", ... (counts[f] of them).
std::vector<std::string> MakeFiles(const TempDir& dir, const std::vector<int>& counts) {
  std::vector<std::string> uris;
  for (size_t f = 0; f < counts.size(); ++f) {
    std::string bytes;
    for (int i = 0; i < counts[f]; ++i)
      AppendTFRecord(&bytes, std::to_string(f) + ":" + std::to_string(i));
    uris.push_back(dir.File("f" + std::to_string(f)));
    testing::WriteFileOrDie(uris.back(), bytes);
  }
  return uris;
}

std::vector<std::string> Drain(Stage<Record>& s, absl::Status* status = nullptr) {
  std::vector<std::string> out;
  while (true) {
    auto n = s.Next();
    if (!n.ok()) {
      if (status) *status = n.status();
      break;
    }
    if (!n->has_value()) break;
    out.emplace_back((*n)->data.view());
  }
  return out;
}

TEST(RecordSourceTest, SequentialReadsFilesInOrder) {
  TempDir dir;
  auto uris = MakeFiles(dir, {2, 0, 3});
  auto s = MakeTFRecordSource(OpenObjectStore(), uris);
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"0:0", "0:1", "2:0", "2:1", "2:2"}));
  auto again = s->Next();  // end of stream is sticky
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  std::vector<StageStats> stats;
  s->AppendStats(&stats);
  EXPECT_EQ(stats[0].Extra("files"), 3);
}

TEST(RecordSourceTest, DeterministicInterleaveIsRoundRobinOverThreads) {
  TempDir dir;
  // cycle 2: thread 0 reads files 0, 2; thread 1 reads files 1, 3.
  auto uris = MakeFiles(dir, {3, 1, 1, 2});
  const std::vector<std::string> want = {"0:0", "1:0", "0:1", "3:0", "0:2", "3:1", "2:0"};
  for (int run = 0; run < 5; ++run) {
    auto s =
        MakeTFRecordSource(OpenObjectStore(), uris, {}, {.cycle_length = 2, .buffered_records = 1});
    EXPECT_EQ(Drain(*s), want) << "run " << run;
  }
}

TEST(RecordSourceTest, NondeterministicInterleaveYieldsEveryRecordOnce) {
  TempDir dir;
  auto uris = MakeFiles(dir, {50, 7, 0, 33, 12});
  auto s = MakeTFRecordSource(OpenObjectStore(), uris, {},
                              {.cycle_length = 3, .buffered_records = 4, .deterministic = false});
  std::vector<std::string> got = Drain(*s);
  std::vector<std::string> want;
  for (int f : {0, 1, 3, 4})
    for (int i = 0; i < std::vector<int>{50, 7, 0, 33, 12}[f]; ++i)
      want.push_back(std::to_string(f) + ":" + std::to_string(i));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(RecordSourceTest, InterleavedErrorsArriveInOrder) {
  TempDir dir;
  auto uris = MakeFiles(dir, {4, 4});
  // Corrupt file 1's record 2 (data CRC): thread 1 stops there.
  std::string bytes = testing::ReadFileOrDie(uris[1]);
  bytes[2 * (3 + 16) + 12] ^= 1;
  testing::WriteFileOrDie(uris[1], bytes);
  auto s = MakeTFRecordSource(OpenObjectStore(), uris, {}, {.cycle_length = 2});
  absl::Status status;
  EXPECT_EQ(Drain(*s, &status), (std::vector<std::string>{"0:0", "1:0", "0:1", "1:1", "0:2"}));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s->Next().status(), status);  // sticky
}

TEST(RecordSourceTest, OpenErrorIsReportedInOrder) {
  TempDir dir;
  auto uris = MakeFiles(dir, {2});
  uris.push_back(dir.File("missing"));
  auto s = MakeTFRecordSource(OpenObjectStore(), uris);
  absl::Status status;
  EXPECT_EQ(Drain(*s, &status).size(), 2u);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
}

TEST(RecordSourceTest, CancelAndDestroyWhileThreadsAreBlocked) {
  TempDir dir;
  auto uris = MakeFiles(dir, {1000, 1000, 1000, 1000});
  for (int i = 0; i < 20; ++i) {
    auto s =
        MakeTFRecordSource(OpenObjectStore(), uris, {}, {.cycle_length = 4, .buffered_records = 2});
    ASSERT_TRUE(s->Next().ok());
    if (i % 2 == 0) {
      s->Cancel();
      EXPECT_EQ(s->Next().status().code(), absl::StatusCode::kCancelled);
    }
    s.reset();  // joins threads blocked on full queues
  }
  // Cancel from another thread while the consumer waits.
  auto s =
      MakeTFRecordSource(OpenObjectStore(), uris, {}, {.cycle_length = 2, .buffered_records = 1});
  std::thread t([&] { s->Cancel(); });
  absl::Status status;
  Drain(*s, &status);
  t.join();
  EXPECT_TRUE(status.ok() || absl::IsCancelled(status)) << status;
}

// Checkpoints verify contents, not only offsets: a file rewritten with
// records of the same lengths (other bytes, or the same records in another
// order, as when shards are converted again) fails the restore with DATA_LOSS
// naming the file and offset, for TFRecord (its stored CRC) and fixed-length
// files (a CRC computed when the state is saved).
enum class Rewrite { kOriginal, kOtherBytes, kReordered };

// Writes file f: 3-byte records "f:0" ... "f:9" (kOriginal), or the same
// lengths with other bytes or in reverse order.
void RewriteFile(const std::string& uri, int f, int records, Rewrite how, bool tfrecord) {
  std::string bytes;
  for (int i = 0; i < records; ++i) {
    const int k = how == Rewrite::kReordered ? records - 1 - i : i;
    const std::string payload =
        std::to_string(f) + (how == Rewrite::kOtherBytes ? "-" : ":") + std::to_string(k);
    if (tfrecord) {
      AppendTFRecord(&bytes, payload);
    } else {
      bytes += payload;
    }
  }
  testing::WriteFileOrDie(uri, bytes);
}

std::vector<std::string> MakeSameLengthFiles(const TempDir& dir, bool tfrecord) {
  std::vector<std::string> uris;
  for (int f = 0; f < 2; ++f) {
    uris.push_back(dir.File("f" + std::to_string(f)));
    RewriteFile(uris.back(), f, 10, Rewrite::kOriginal, tfrecord);
  }
  return uris;
}

StagePtr<Record> SameLengthSource(const std::vector<std::string>& uris, bool tfrecord) {
  if (tfrecord) return MakeTFRecordSource(OpenObjectStore(), uris);
  return MakeFixedLengthSource(OpenObjectStore(), uris, {.record_bytes = 3});
}

// For TFRecord and fixed-length files and each way of rewriting file 0:
// saves `build(source)` after `n` records, rewrites file 0 and expects the
// restore to be DATA_LOSS with each of `messages(file 0's URI)` in its
// message (and the same state to restore before the rewrite).
void ExpectRestoreAfterRewriteIsDataLoss(
    const std::function<Pipeline<Record>(Pipeline<Record>)>& build, size_t n,
    const std::function<std::vector<std::string>(const std::string&)>& messages) {
  for (bool tfrecord : {true, false}) {
    for (Rewrite how : {Rewrite::kOtherBytes, Rewrite::kReordered}) {
      SCOPED_TRACE(std::string(tfrecord ? "tfrecord" : "fixed-length") +
                   (how == Rewrite::kOtherBytes ? ", other bytes" : ", reordered"));
      TempDir dir;
      const std::vector<std::string> uris = MakeSameLengthFiles(dir, tfrecord);
      auto make = [&] { return build(From(SameLengthSource(uris, tfrecord))); };
      absl::StatusOr<std::string> state = testing::SaveAfter(make(), n);
      ASSERT_TRUE(state.ok()) << state.status();
      Pipeline<Record> unchanged = make();
      ASSERT_TRUE(unchanged.RestoreState(*state).ok());
      RewriteFile(uris[0], 0, 10, how, tfrecord);
      testing::ExpectRestoreIsDataLoss<Record>(make, *state, messages(uris[0]));
    }
  }
}

TEST(RecordSourceTest, RestoreAfterABufferedRecordsFileWasRewrittenIsDataLoss) {
  // The buffer holds records of file 0; the source is in file 1.
  ExpectRestoreAfterRewriteIsDataLoss(
      [](Pipeline<Record> p) { return std::move(p).Shuffle({.buffer_size = 8, .seed = 1}); }, 5,
      [](const std::string& uri) -> std::vector<std::string> {
        return {"of " + uri + " (at offset ", "has other contents than when the state was saved"};
      });
}

TEST(RecordSourceTest, RestoreAfterTheOpenFileWasRewrittenIsDataLoss) {
  // No buffer: the state is the position, 3 records into file 0.
  ExpectRestoreAfterRewriteIsDataLoss([](Pipeline<Record> p) { return p; }, 3,
                                      [](const std::string& uri) -> std::vector<std::string> {
                                        return {"record 2 of " + uri + " (at offset "};
                                      });
}

TEST(RecordSourceTest, CorruptionBudgetCountsAndLimits) {
  CorruptionBudget b(2);
  EXPECT_TRUE(b.Skip("a").ok());
  EXPECT_TRUE(b.Skip("b").ok());
  absl::Status s = b.Skip("c at x:7");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("c at x:7"), std::string::npos);
  EXPECT_EQ(b.skipped(), 3);
}

}  // namespace
}  // namespace dataecho
