// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Pipeline::SaveState / RestoreState: for many pipeline shapes, a pipeline
// saved at a random position, destroyed, rebuilt and restored yields exactly
// the rest of an uninterrupted run; bad states get the documented codes.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "dataecho/checkpoint.h"
#include "dataecho/crc32c.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/resume_check.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using ::dataecho::testing::CheckResumes;
using ::dataecho::testing::Key;
using ::dataecho::testing::Rest;

std::vector<std::string> WriteTFRecordFiles(const testing::TempDir& dir, int files, int records,
                                            bool gzip) {
  std::vector<std::string> paths;
  for (int f = 0; f < files; ++f) {
    std::string bytes;
    for (int r = 0; r < records; ++r) {
      AppendTFRecord(&bytes, fmt::format("file {} record {} {}", f, r, std::string(r % 7, 'x')));
    }
    const std::string path = dir.File(fmt::format("part-{}.tfrecord{}", f, gzip ? ".gz" : ""));
    testing::WriteFileOrDie(path, gzip ? testing::Gzip(bytes) : bytes);
    paths.push_back(path);
  }
  return paths;
}

std::shared_ptr<ObjectStore> Store() { return OpenObjectStore(); }

TEST(CheckpointTest, RangeTake) {
  CheckResumes<int64_t>([] { return FromRange(0, 50).Take(30); });
}

TEST(CheckpointTest, RangeRepeatShuffle) {
  CheckResumes<int64_t>(
      [] { return FromRange(0, 23).Repeat(3).Shuffle({.buffer_size = 7, .seed = 3}); });
}

TEST(CheckpointTest, RangeEchoFractionalShuffleTake) {
  CheckResumes<int64_t>([] {
    return FromRange(0, 40).Echo({.factor = 2.3, .seed = 5}).Shuffle({.buffer_size = 9}).Take(70);
  });
}

TEST(CheckpointTest, ExamplesEchoShuffleBatch) {
  CheckResumes<Batch>([] {
    return FromVector(testing::MakeExamples(40))
        .Echo({.factor = 2.5, .seed = 1})
        .Shuffle({.buffer_size = 16, .seed = 2})
        .Batch({.batch_size = 5});
  });
}

TEST(CheckpointTest, ExamplesShuffleRepeatEchoShuffleBatchEcho) {
  CheckResumes<Batch>([] {
    return FromVector(testing::MakeExamples(30))
        .Shuffle({.buffer_size = 8, .seed = 4})
        .Repeat(2)
        .Echo({.factor = 1.7, .seed = 6})
        .Shuffle({.buffer_size = 10, .seed = 7})
        .Batch({.batch_size = 4})
        .Echo({.factor = 2.0, .seed = 8, .name = "batch_echo"});
  });
}

TEST(CheckpointTest, BatchEchoFractionalWithPartialLastBatch) {
  CheckResumes<Batch>([] {
    return FromVector(testing::MakeExamples(23))
        .Filter([](const Example& e) { return e.source_index % 5 != 0; })
        .Batch({.batch_size = 4})
        .Echo({.factor = 2.5, .seed = 9});
  });
}

TEST(CheckpointTest, RepeatSourceFactoryShuffle) {
  CheckResumes<int64_t>([] {
    return Pipeline<int64_t>(RepeatSource<int64_t>([] { return RangeSource(0, 9); }, 3))
        .Shuffle({.buffer_size = 4, .seed = 1});
  });
}

TEST(CheckpointTest, TFRecordEchoShuffle) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 15, /*gzip=*/false);
  CheckResumes<Record>([&] {
    return From(MakeTFRecordSource(Store(), paths))
        .Echo({.factor = 2.0, .seed = 1})
        .Shuffle({.buffer_size = 20, .seed = 2});
  });
}

TEST(CheckpointTest, GzipTFRecordRepeatEchoShuffleTake) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 12, /*gzip=*/true);
  CheckResumes<Record>([&] {
    return From(MakeTFRecordSource(Store(), paths, {.compression = Compression::kAuto}))
        .Repeat(2)
        .Echo({.factor = 1.5, .seed = 3})
        .Shuffle({.buffer_size = 10, .seed = 4})
        .Take(60);
  });
}

TEST(CheckpointTest, TFRecordRepeatNewFileOrderEachEpochShuffle) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 4, 6, /*gzip=*/false);
  CheckResumes<Record>([&] {
    return From(MakeTFRecordSource(Store(), paths, {}, {.file_order_seed = 5}))
        .Repeat(3)
        .Shuffle({.buffer_size = 30, .seed = 6});
  });
}

TEST(CheckpointTest, TFRecordOverHttpWithFaults) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 40, /*gzip=*/false);
  absl::StatusOr<std::unique_ptr<testing::HttpServer>> server =
      testing::HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status();
  std::vector<std::string> uris;
  for (int f = 0; f < 2; ++f)
    uris.push_back(fmt::format("{}/part-{}.tfrecord", (*server)->url(), f));
  ObjectStoreOptions options;
  options.retry.initial_backoff = absl::Milliseconds(1);
  std::shared_ptr<ObjectStore> store = OpenObjectStore(options);
  // Every fourth GET is cut after 100 bytes: reads resume and restores re-read.
  (*server)->AddFault(
      {.kind = testing::HttpFault::Kind::kReset, .after_bytes = 100, .skip = 3, .times = -1});
  CheckResumes<Record>(
      [&] {
        return From(MakeTFRecordSource(store, uris, {.buffer_size = 128, .read_ahead = 256}))
            .Echo({.factor = 1.5, .seed = 7})
            .Shuffle({.buffer_size = 12, .seed = 8});
      },
      /*positions=*/8);
  EXPECT_GT((*server)->faults_fired(), 0);
}

TEST(CheckpointTest, FixedLengthShuffleThrottle) {
  testing::TempDir dir;
  std::vector<std::string> paths;
  for (int f = 0; f < 2; ++f) {
    std::string bytes = "HDR";
    for (int r = 0; r < 20; ++r) bytes += fmt::format("{:02d}{:02d}", f, r);
    paths.push_back(dir.File(fmt::format("f{}.bin", f)));
    testing::WriteFileOrDie(paths.back(), bytes);
  }
  CheckResumes<Record>([&] {
    return From(MakeFixedLengthSource(Store(), paths, {.record_bytes = 4, .header_bytes = 3}))
        .Shuffle({.buffer_size = 5, .seed = 1})
        .Throttle({.latency = absl::Microseconds(1)});
  });
}

TEST(CheckpointTest, IdxEchoFilterShuffle) {
  testing::TempDir dir;
  // IDX: 0, 0, type 0x08 (uint8), 2 dims; dims big-endian: 30 rows of 3 bytes.
  std::string bytes("\0\0\x08\x02\0\0\0\x1e\0\0\0\x03", 12);
  for (int r = 0; r < 30; ++r) bytes += fmt::format("{:03d}", r);
  const std::string path = dir.File("images.idx");
  testing::WriteFileOrDie(path, bytes);
  CheckResumes<Record>([&] {
    return From(MakeIdxRecordSource(Store(), {path}))
        .Echo({.factor = 3.0, .seed = 2})
        .Filter([](const Record& r) { return r.source_index % 3 != 1; })
        .Shuffle({.buffer_size = 11, .seed = 3});
  });
}

Pipeline<Batch> EchoShuffleBatch() {
  return FromVector(testing::MakeExamples(20))
      .Echo({.factor = 2.0, .seed = 1})
      .Shuffle({.buffer_size = 8, .seed = 2})
      .Batch({.batch_size = 4});
}

TEST(CheckpointTest, OtherShapeIsInvalidArgumentNamingTheStage) {
  absl::StatusOr<std::string> state = testing::SaveAfter(EchoShuffleBatch(), 2);
  ASSERT_TRUE(state.ok()) << state.status();
  // Another shuffle size: the shuffle differs.
  Pipeline<Batch> other = FromVector(testing::MakeExamples(20))
                              .Echo({.factor = 2.0, .seed = 1})
                              .Shuffle({.buffer_size = 9, .seed = 2})
                              .Batch({.batch_size = 4});
  absl::Status s = other.RestoreState(*state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("stage 2 ('shuffle')"), std::string::npos) << s;
  EXPECT_TRUE(other.status().ok());  // unchanged: still usable
  // A stage missing: the first differing one is named.
  Pipeline<Batch> fewer =
      FromVector(testing::MakeExamples(20)).Shuffle({.buffer_size = 8}).Batch({.batch_size = 4});
  s = fewer.RestoreState(*state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("stage 1 is 'echo' in the state but 'shuffle'"), std::string::npos)
      << s;
}

TEST(CheckpointTest, TruncatedOrFlippedStateIsDataLoss) {
  absl::StatusOr<std::string> state = testing::SaveAfter(EchoShuffleBatch(), 3);
  ASSERT_TRUE(state.ok()) << state.status();
  for (size_t n = 0; n < state->size(); ++n) {
    Pipeline<Batch> p = EchoShuffleBatch();
    absl::Status s = p.RestoreState(state->substr(0, n));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "truncated to " << n << ": " << s;
  }
  for (size_t i = 0; i < state->size(); ++i) {
    for (int bit : {0, 5}) {
      std::string bad = *state;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      Pipeline<Batch> p = EchoShuffleBatch();
      absl::Status s = p.RestoreState(bad);
      EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "byte " << i << ": " << s;
    }
  }
  Pipeline<Batch> p = EchoShuffleBatch();
  EXPECT_EQ(p.RestoreState("").code(), absl::StatusCode::kDataLoss);
}

// Version 1 (before record checksums) is still read; other versions are
// INVALID_ARGUMENT naming the versions this library reads.
TEST(CheckpointTest, Version1StatesAreReadOtherVersionsAreInvalidArgument) {
  auto make = [] { return FromRange(0, 30).Shuffle({.buffer_size = 7, .seed = 3}); };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 10);
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_EQ((*state)[4], static_cast<char>(kStateVersion));  // after "DEST"
  auto with_version = [&](char version) {
    std::string s = state->substr(0, state->size() - 4);
    s[4] = version;
    const uint32_t crc = MaskCrc32c(Crc32c(s));
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    return s;
  };
  Pipeline<int64_t> current = make(), old = make(), future = make();
  ASSERT_TRUE(current.RestoreState(*state).ok());
  absl::Status s = old.RestoreState(with_version(1));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Rest(old), Rest(current));
  s = future.RestoreState(with_version(static_cast<char>(kStateVersion + 1)));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(absl::StrCat("this library reads versions 1 to ", kStateVersion)),
            std::string::npos)
      << s;
}

// A sealed writer (StateWriter::Seal: a Prefetch's snapshot) gives the same
// state bytes as the same sections unsealed, appended (also sealed inside a
// sealed writer) or not; the state parses and reads back.
TEST(CheckpointTest, SealedSectionsGiveTheSameState) {
  auto write = [](StateWriter& w, int first, int stages) {
    for (int i = first; i < first + stages; ++i) {
      w.BeginStage(fmt::format("stage{}", i), 1000 + i);
      w.U64(i);
      w.Bytes(std::string(static_cast<size_t>(i) * 1000, static_cast<char>('a' + i)));
      w.Fixed32(0xabcd0000u + i);
    }
  };
  // What is expected: stages 0..6 written into one writer.
  StateWriter plain;
  write(plain, 0, 7);
  const std::string want = plain.Finish();

  // Stages 0-1 sealed, appended into 2-3 (sealed again), appended with 4-6 after.
  StateWriter inner;
  write(inner, 0, 2);
  const size_t inner_bytes = inner.payload_bytes();
  inner.Seal();
  EXPECT_EQ(inner.payload_bytes(), inner_bytes);
  StateWriter middle;
  middle.Append(inner);
  write(middle, 2, 2);
  middle.Seal();
  StateWriter outer;
  outer.Append(middle);
  write(outer, 4, 3);
  EXPECT_EQ(outer.shape(), plain.shape());
  EXPECT_EQ(outer.payload_bytes(), plain.payload_bytes());
  EXPECT_EQ(outer.Finish(), want);
  // A sealed writer appended twice, and one finished alone.
  StateWriter twice;
  twice.Append(inner);
  twice.Append(inner);
  StateWriter twice_plain;
  write(twice_plain, 0, 2);
  write(twice_plain, 0, 2);
  EXPECT_EQ(twice.Finish(), twice_plain.Finish());
  StateWriter alone;
  write(alone, 0, 7);
  alone.Seal();
  EXPECT_EQ(alone.Finish(), want);

  absl::StatusOr<StateReader> r = StateReader::Parse(outer.Finish());
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(r->BeginStage(fmt::format("stage{}", i)).ok());
    EXPECT_EQ(r->U64(), static_cast<uint64_t>(i));
    EXPECT_EQ(r->Bytes().size(), static_cast<size_t>(i) * 1000);
    EXPECT_EQ(r->Fixed32(), 0xabcd0000u + i);
  }
  EXPECT_TRUE(r->Finish().ok());
}

// FinishCord() gives Finish()'s bytes, sharing the sealed blocks instead of
// copying them (each is one chunk of the Cord, at the block's address), and
// StateReader::Parse reads the Cord, flat or in chunks.
TEST(CheckpointTest, FinishCordSharesSealedBlocks) {
  StateWriter inner;
  for (int i = 0; i < 3; ++i) {
    inner.BeginStage(fmt::format("stage{}", i), 1000 + i);
    inner.U64(i);
    inner.Bytes(std::string(5000, static_cast<char>('a' + i)));
  }
  inner.Seal();
  StateWriter outer;
  outer.Append(inner);
  outer.BeginStage("prefetch", 7);
  outer.U64(42);
  outer.Fixed32(0x12345678u);
  const std::string want = outer.Finish();
  const absl::Cord cord = outer.FinishCord();
  EXPECT_EQ(std::string(cord), want);
  // The block is one chunk, not copied: two Cords of the same writer share it.
  const absl::Cord again = outer.FinishCord();
  auto largest_chunk = [](const absl::Cord& c) {
    absl::string_view big;
    for (absl::string_view chunk : c.Chunks()) {
      if (chunk.size() > big.size()) big = chunk;
    }
    return big;
  };
  EXPECT_GE(largest_chunk(cord).size(), 15000u);
  EXPECT_EQ(largest_chunk(cord).data(), largest_chunk(again).data());
  // A writer with nothing sealed: the same bytes too.
  StateWriter loose;
  loose.BeginStage("s", 1);
  loose.Bytes("abc");
  EXPECT_EQ(std::string(loose.FinishCord()), loose.Finish());

  absl::StatusOr<StateReader> r = StateReader::Parse(cord);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(r->BeginStage(fmt::format("stage{}", i)).ok());
    EXPECT_EQ(r->U64(), static_cast<uint64_t>(i));
    EXPECT_EQ(r->Bytes(), std::string(5000, static_cast<char>('a' + i)));
  }
  ASSERT_TRUE(r->BeginStage("prefetch").ok());
  EXPECT_EQ(r->U64(), 42u);
  EXPECT_EQ(r->Fixed32(), 0x12345678u);
  EXPECT_TRUE(r->Finish().ok());
  // A flipped bit anywhere, or a cut, is DATA_LOSS read from a Cord as from a string.
  for (size_t i = 0; i < want.size(); i += 97) {
    std::string bad = want;
    bad[i] = static_cast<char>(bad[i] ^ 0x04);
    absl::Cord chunked;  // in three chunks
    chunked.Append(absl::Cord(bad.substr(0, i / 2)));
    chunked.Append(absl::Cord(bad.substr(i / 2, 6000)));
    chunked.Append(absl::Cord(bad.substr(std::min(bad.size(), i / 2 + 6000))));
    EXPECT_EQ(StateReader::Parse(chunked).status().code(), absl::StatusCode::kDataLoss) << i;
  }
  for (size_t n = 0; n < want.size(); n += 101) {
    EXPECT_EQ(StateReader::Parse(cord.Subcord(0, n)).status().code(), absl::StatusCode::kDataLoss)
        << n;
  }
}

// A writer Reset() and written again gives the bytes a new writer gives,
// and a block it shared (a Cord, another writer, a copy) is not written over.
TEST(CheckpointTest, ResetWritersGiveTheSameStateAndKeepSharedBlocks) {
  auto write = [](StateWriter& w, char c) {
    for (int i = 0; i < 2; ++i) {
      w.BeginStage(fmt::format("stage{}", i), 1000 + i);
      w.U64(static_cast<uint64_t>(c));
      w.Bytes(std::string(3000, c));
    }
  };
  auto fresh = [&](char c) {
    StateWriter w;
    write(w, c);
    w.Seal();
    return w.Finish();
  };
  StateWriter w;
  write(w, 'a');
  w.Seal();
  const absl::Cord cord = w.FinishCord();  // shares the block
  StateWriter appended;
  StateWriter copy;
  for (char c : {'b', 'c', 'd', 'e'}) {
    w.Reset();
    write(w, c);
    w.Seal();
    EXPECT_EQ(w.Finish(), fresh(c)) << c;
    if (c == 'c') appended.Append(w);
    if (c == 'd') copy = w;
  }
  EXPECT_EQ(std::string(cord), fresh('a'));
  EXPECT_EQ(appended.Finish(), fresh('c'));
  EXPECT_EQ(copy.Finish(), fresh('d'));
  // Unsealed, and reset before any Seal(): the same bytes as a new writer.
  w.Reset();
  write(w, 'f');
  StateWriter plain;
  write(plain, 'f');
  EXPECT_EQ(w.Finish(), plain.Finish());
  EXPECT_EQ(w.shape(), plain.shape());
}

// Work a stage defers (StateReader::Defer) is waited for by Finish(), whose
// status is its first error.
TEST(CheckpointTest, FinishWaitsForDeferredWork) {
  StateWriter w;
  w.BeginStage("s", 0);
  w.U64(1);
  const std::string state = w.Finish();
  absl::StatusOr<StateReader> r = StateReader::Parse(state);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->BeginStage("s").ok());
  EXPECT_EQ(r->U64(), 1u);
  int waited = 0;
  r->Defer([&] {
    ++waited;
    return absl::OkStatus();
  });
  r->Defer([&] {
    ++waited;
    return absl::DataLossError("deferred");
  });
  absl::Status s = r->Finish();
  EXPECT_EQ(waited, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_EQ(s.message(), "deferred");
}

TEST(CheckpointTest, UnsupportedStagesFailNamingThem) {
  Pipeline<int64_t> generated =
      FromGenerator<int64_t>([i = 0]() mutable -> absl::StatusOr<std::optional<int64_t>> {
        if (i == 5) return std::nullopt;
        return i++;
      }).Take(3);
  absl::StatusOr<std::string> s = generated.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(s.status().message().find("generator"), std::string::npos) << s.status();

  // A shuffle of more batches than a Batch keeps references to cannot reference them.
  Pipeline<Batch> shuffled_batches = FromVector(testing::MakeExamples(100))
                                         .Batch({.batch_size = 2})
                                         .Shuffle({.buffer_size = 20, .name = "batch_shuffle"});
  ASSERT_TRUE(shuffled_batches.Next().ok());
  s = shuffled_batches.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
}

TEST(CheckpointTest, ShuffleStateIsReferencesNotPayload) {
  // 4 KiB payloads: the buffer holds 500 of them (2 MB); the state holds
  // references only (a few bytes each).
  auto make = [] {
    return FromVector(testing::MakeExamples(1000, 4096))
        .Echo({.factor = 2.0, .seed = 1})
        .Shuffle({.buffer_size = 500, .seed = 2});
  };
  Pipeline<Example> p = make();
  for (int i = 0; i < 700; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_LT(state->size(), 500u * 8) << state->size();
  Pipeline<Example> q = make();
  ASSERT_TRUE(q.RestoreState(*state).ok());
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<std::optional<Example>> a = p.Next();
    absl::StatusOr<std::optional<Example>> b = q.Next();
    ASSERT_TRUE(a.ok() && b.ok() && a->has_value() && b->has_value());
    ASSERT_EQ(Key(**a), Key(**b)) << i;
  }
}

}  // namespace
}  // namespace dataecho
