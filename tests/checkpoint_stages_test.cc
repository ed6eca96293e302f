// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// SaveState / RestoreState of Zip, Interleave, Cache and PaddedBatch, and
// their epochs (Restart under a Repeat): a pipeline saved at a random
// position, destroyed, rebuilt and restored yields exactly the rest of an
// uninterrupted run.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/checkpoint.h"
#include "dataecho/formats/crc32c.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

// An element as comparable text: every index and every payload byte.
std::string Key(int64_t v) { return std::to_string(v); }
std::string Key(const Example& e) {
  std::string s =
      fmt::format("ex {} r{} e{} l{}:", e.source_index, e.repeat_index, e.epoch, e.label);
  for (const Tensor& t : e.components) {
    s.append(fmt::format("[{}]", t.num_elements()));
    s.append(t.buffer().view());
  }
  return s;
}
std::string Key(const Record& r) {
  return fmt::format("rec {} r{} e{} @{} {}:{}", r.source_index, r.repeat_index, r.epoch, r.offset,
                     r.uri(), r.data.view());
}
std::string Key(const Batch& b) {
  std::string s =
      fmt::format("batch n{} f{} r{} e{}:", b.num_rows, b.fresh_rows, b.repeat_index, b.epoch);
  s.append(b.labels.buffer().view());
  s.append(b.source_indices.buffer().view());
  s.append(b.repeat_indices.buffer().view());
  for (const Tensor& t : b.components) {
    s.append(fmt::format("[{}]", t.num_elements()));
    s.append(t.buffer().view());
  }
  return s;
}
template <typename A, typename B>
std::string Key(const std::pair<A, B>& p) {
  return Key(p.first) + " | " + Key(p.second);
}

template <typename T>
std::vector<std::string> Rest(Pipeline<T>& p) {
  std::vector<std::string> out;
  while (true) {
    absl::StatusOr<std::optional<T>> next = p.Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) break;
    out.push_back(Key(**next));
  }
  return out;
}

std::vector<std::string> Tail(const std::vector<std::string>& v, size_t from) {
  return std::vector<std::string>(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
}

// Saves `make()` at `positions` random positions (always 0 and the end too),
// restores a rebuilt pipeline from each state (and, once, saves the restored
// one again at once and restores that) and compares what follows with an
// uninterrupted run. Returns the number of elements of a whole run.
template <typename T>
size_t CheckResumes(const std::function<Pipeline<T>()>& make, int positions = 16,
                    uint32_t seed = 1, size_t min_position = 0) {
  Pipeline<T> whole = make();
  EXPECT_TRUE(whole.status().ok()) << whole.status();
  const std::vector<std::string> expected = Rest(whole);
  EXPECT_FALSE(expected.empty());
  std::mt19937 rng(seed);
  std::vector<size_t> at = {min_position, expected.size()};
  for (int i = 2; i < positions; ++i) {
    at.push_back(std::uniform_int_distribution<size_t>(min_position, expected.size())(rng));
  }
  for (size_t k : at) {
    std::string state;
    {
      Pipeline<T> first = make();
      for (size_t i = 0; i < k; ++i) {
        absl::StatusOr<std::optional<T>> next = first.Next();
        EXPECT_TRUE(next.ok() && next->has_value()) << "at " << i;
      }
      absl::StatusOr<std::string> saved = first.SaveState();
      EXPECT_TRUE(saved.ok()) << saved.status() << " at " << k;
      if (!saved.ok()) return 0;
      state = *saved;
      EXPECT_EQ(Rest(first), Tail(expected, k)) << "the saved pipeline, read on, at " << k;
    }
    Pipeline<T> second = make();
    absl::Status restored = second.RestoreState(state);
    EXPECT_TRUE(restored.ok()) << restored << " at " << k;
    // A restored pipeline saves the same position again.
    absl::StatusOr<std::string> again = second.SaveState();
    EXPECT_TRUE(again.ok()) << again.status() << " at " << k;
    if (!again.ok()) return 0;
    Pipeline<T> third = make();
    EXPECT_TRUE(third.RestoreState(*again).ok()) << " at " << k;
    EXPECT_EQ(Rest(second), Tail(expected, k)) << "restored at " << k << " of " << expected.size();
    EXPECT_EQ(Rest(third), Tail(expected, k)) << "restored twice at " << k;
  }
  return expected.size();
}

std::vector<std::string> WriteTFRecordFiles(const testing::TempDir& dir, int files, int records) {
  std::vector<std::string> paths;
  for (int f = 0; f < files; ++f) {
    std::string bytes;
    for (int r = 0; r < records; ++r) {
      AppendTFRecord(&bytes, fmt::format("file {} record {} {}", f, r, std::string(r % 7, 'x')));
    }
    const std::string path = dir.File(fmt::format("part-{}.tfrecord", f));
    testing::WriteFileOrDie(path, bytes);
    paths.push_back(path);
  }
  return paths;
}

std::shared_ptr<ObjectStore> Store() { return OpenObjectStore(); }

// Examples whose single int32 component has 1 + i % 5 elements.
std::vector<Example> Sequences(int64_t n) {
  std::vector<Example> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = 1 + i % 5;
    MutableBuffer mb(static_cast<size_t>(len) * 4);
    for (int64_t j = 0; j < len; ++j) {
      const auto v = static_cast<int32_t>(i * 10 + j);
      std::memcpy(mb.data() + j * 4, &v, 4);
    }
    Example e;
    e.components.push_back(*Tensor::Make(DType::kInt32, {len}, std::move(mb).Freeze()));
    e.source_index = static_cast<uint64_t>(i);
    e.label = i % 3;
    out.push_back(std::move(e));
  }
  return out;
}

using ExampleAndNumber = std::pair<Example, int64_t>;
using RecordPair = std::pair<Record, Record>;

TEST(CheckpointStagesTest, ZipEchoShuffleRepeat) {
  // Zip restarts (its epochs), passes references through its halves.
  EXPECT_GT(CheckResumes<ExampleAndNumber>([] {
              return FromVector(testing::MakeExamples(30))
                  .Zip(FromRange(100, 125))
                  .Repeat(3)
                  .Echo({.factor = 1.5, .seed = 4})
                  .Shuffle({.buffer_size = 8, .seed = 5});
            }),
            75u);
}

TEST(CheckpointStagesTest, ZipOfRecordsShuffle) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 9);
  EXPECT_EQ(CheckResumes<RecordPair>([&] {
              return From(MakeTFRecordSource(Store(), paths))
                  .Zip(From(MakeTFRecordSource(Store(), {paths[2], paths[0]})))
                  .Shuffle({.buffer_size = 5, .seed = 6});
            }),
            18u);
}

TEST(CheckpointStagesTest, ZipEndsAndRepeats) {
  // The shorter input ends the zip; Repeat starts both over.
  Pipeline<std::pair<int64_t, int64_t>> p = FromRange(0, 3).Zip(FromRange(10, 15)).Repeat(2);
  std::vector<std::string> got = Rest(p);
  EXPECT_EQ(got, (std::vector<std::string>{"0 | 10", "1 | 11", "2 | 12", "0 | 10", "1 | 11",
                                           "2 | 12"}));
}

Pipeline<Record> InterleavedFiles(const std::vector<std::string>& paths, int64_t cycle,
                                  int64_t block) {
  return FromVector(paths).Interleave(
      [](std::string f) { return From(MakeTFRecordSource(Store(), {std::move(f)})); },
      {.cycle_length = cycle, .block_length = block});
}

TEST(CheckpointStagesTest, InterleaveOfFilesRepeatTake) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 5, 7);
  EXPECT_EQ(CheckResumes<Record>([&] {
              return InterleavedFiles(paths, 2, 3).Repeat(2).Take(60);
            }),
            60u);
  EXPECT_EQ(CheckResumes<Record>([&] { return InterleavedFiles(paths, 8, 1); }, 20, 2), 35u);
}

TEST(CheckpointStagesTest, InterleaveOfRangesRestartsEachEpoch) {
  auto make = [] {
    return FromRange(0, 4)
        .Interleave([](int64_t i) { return FromRange(i * 100, i * 100 + i + 1); },
                    {.cycle_length = 2})
        .Repeat(3);
  };
  Pipeline<int64_t> p = make();
  const std::vector<std::string> got = Rest(p);
  // Slot 0: range 0 ends after one element; slot 1 (range 1) goes on; slot 0
  // opens range 2, ...
  const std::vector<std::string> epoch = {"0", "100", "101", "200", "201", "300", "202",
                                          "301", "302", "303"};
  std::vector<std::string> want;
  for (int e = 0; e < 3; ++e) want.insert(want.end(), epoch.begin(), epoch.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(CheckResumes<int64_t>(make), 30u);
}

TEST(CheckpointStagesTest, ShuffleAfterInterleaveFailsNamingIt) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 4);
  Pipeline<Record> p = InterleavedFiles(paths, 2, 1).Shuffle({.buffer_size = 3, .seed = 1});
  ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> s = p.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("interleave"), std::string::npos) << s.status();
}

TEST(CheckpointStagesTest, CacheFillingAndReplaying) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 8);
  // Saves fall in the filling epoch (0) and in the replayed ones (1, 2).
  EXPECT_EQ(CheckResumes<Record>([&] {
              return From(MakeTFRecordSource(Store(), paths))
                  .Cache()
                  .Shuffle({.buffer_size = 6, .seed = 3})
                  .Repeat(3);
            },
                                 24),
            72u);
  EXPECT_GT(CheckResumes<Example>([&] {
              return FromVector(testing::MakeExamples(20))
                  .Cache()
                  .Repeat(3)
                  .Echo({.factor = 2.0, .seed = 1})
                  .Shuffle({.buffer_size = 9, .seed = 2});
            }),
            100u);
}

TEST(CheckpointStagesTest, CacheRestartedBeforeItsInputEnded) {
  // Take ends an epoch before the cache's input ends: the next epoch replays
  // what is cached, then reads on.
  EXPECT_EQ(CheckResumes<int64_t>([] { return FromRange(0, 20).Cache().Take(7).Repeat(4); }), 28u);
}

TEST(CheckpointStagesTest, PaddedBatchWithBatchEcho) {
  EXPECT_GT(CheckResumes<Batch>([] {
              return FromVector(Sequences(40))
                  .Repeat(2)
                  .Echo({.factor = 1.5, .seed = 7})
                  .Shuffle({.buffer_size = 10, .seed = 8})
                  .PaddedBatch({.batch_size = 4})
                  .Echo({.factor = 2.5, .seed = 9, .name = "batch_echo"});
            }),
            40u);
}

TEST(CheckpointStagesTest, PaddedBatchRepeats) {
  auto make = [] {
    return FromVector(Sequences(10))
        .PaddedBatch({.batch_size = 4, .padding_values = {-1}})
        .Repeat(2);
  };
  Pipeline<Batch> p = make();
  EXPECT_EQ(Rest(p).size(), 6u);  // 4 + 4 + 2 rows, twice
  EXPECT_EQ(CheckResumes<Batch>(make), 6u);
}

TEST(CheckpointStagesTest, ShuffleOfPaddedBatchesFailsNamingIt) {
  Pipeline<Batch> p = FromVector(Sequences(20))
                          .PaddedBatch({.batch_size = 2})
                          .Shuffle({.buffer_size = 3, .name = "batch_shuffle"});
  ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> s = p.SaveState();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("padded_batch"), std::string::npos) << s.status();
}

TEST(CheckpointStagesTest, BadStatesOfTheseStagesAreErrorsNeverCrashes) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 3, 6);
  auto make = [&] {
    return InterleavedFiles(paths, 2, 2)
        .Zip(From(MakeTFRecordSource(Store(), paths)).Cache().Shuffle({.buffer_size = 4}));
  };
  Pipeline<RecordPair> p = make();
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  // Every cut is DATA_LOSS (the checksum).
  for (size_t cut = 0; cut < state->size(); cut += 3) {
    Pipeline<RecordPair> q = make();
    absl::Status s = q.RestoreState(state->substr(0, cut));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut << " " << s;
  }
  // A flipped bit with a valid checksum: an error or the same elements'
  // count at most, never a crash or a pipeline that spins.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::string body = state->substr(0, state->size() - 4);
    const size_t at = std::uniform_int_distribution<size_t>(4, body.size() - 1)(rng);
    body[at] = static_cast<char>(body[at] ^ (1 << (trial % 8)));
    const uint32_t crc = MaskCrc32c(Crc32c(body));
    for (int i = 0; i < 4; ++i) body.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    Pipeline<RecordPair> q = make();
    if (!q.RestoreState(body).ok()) continue;
    int n = 0;
    while (n < 1000) {
      absl::StatusOr<std::optional<RecordPair>> next = q.Next();
      if (!next.ok() || !next->has_value()) break;
      ++n;
    }
    EXPECT_LT(n, 1000);
  }
}


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

TEST(CheckpointStagesTest, RestoreReadsFarApartRecordsOfLargeFiles) {
  // 2 files of 3 MB: a shuffle buffer of 300 records spread over them, read
  // again with several ranged reads (records 256 KB apart are not coalesced).
  testing::TempDir dir;
  const std::vector<std::string> paths = {WriteBigFile(dir, "a.tfrecord", 400, 7000),
                                          WriteBigFile(dir, "b.tfrecord", 400, 7000)};
  EXPECT_EQ(CheckResumes<Record>([&] {
              return From(MakeTFRecordSource(Store(), paths))
                  .Echo({.factor = 1.0})
                  .Shuffle({.buffer_size = 300, .seed = 9})
                  .Take(500);
            },
                                 6),
            500u);
  // One record in 40 (280 KB apart): each buffered record is its own read.
  EXPECT_EQ(CheckResumes<Record>([&] {
              return From(MakeTFRecordSource(Store(), paths))
                  .Filter([](const Record& r) { return (r.source_index & 0xffff) % 40 == 0; })
                  .Shuffle({.buffer_size = 12, .seed = 9});
            },
                                 8),
            20u);
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

TEST(CheckpointStagesTest, FileThatChangedSizeIsDataLossNamingIt) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 2, 30);
  auto make = [&] { return From(MakeTFRecordSource(Store(), paths)).Shuffle({.buffer_size = 5}); };
  Pipeline<Record> p = make();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  // The same records, and one more at the end.
  std::string bytes = ReadAll(paths[0]);
  AppendTFRecord(&bytes, "appended");
  testing::WriteFileOrDie(paths[0], bytes);
  Pipeline<Record> q = make();
  absl::Status s = q.RestoreState(*state);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("part-0.tfrecord"), std::string::npos) << s;
  EXPECT_NE(s.message().find("bytes"), std::string::npos) << s;
}

TEST(CheckpointStagesTest, FileWhoseHeadChangedIsDataLossNamingIt) {
  testing::TempDir dir;
  const std::vector<std::string> paths = WriteTFRecordFiles(dir, 1, 40);
  auto make = [&] { return From(MakeTFRecordSource(Store(), paths)); };
  Pipeline<Record> p = make();
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
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
  Pipeline<Record> q = make();
  absl::Status s = q.RestoreState(*state);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("part-0.tfrecord"), std::string::npos) << s;
  EXPECT_NE(s.message().find("first"), std::string::npos) << s;
}

// A state of format version 2 (before fingerprints and the position's
// offset), written by hand for a record source alone: still read.
TEST(CheckpointStagesTest, Version2StateOfARecordSourceIsRead) {
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
  for (int i = 0; i < 8; ++i) v2.push_back(static_cast<char>((shape.options_hash >> (8 * i)) & 0xff));
  v2.push_back(static_cast<char>(payload.size()));
  v2 += payload;
  const uint32_t state_crc = MaskCrc32c(Crc32c(v2));
  for (int i = 0; i < 4; ++i) v2.push_back(static_cast<char>((state_crc >> (8 * i)) & 0xff));
  Pipeline<Record> old = make();
  absl::Status s = old.RestoreState(v2);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Rest(old), Rest(p));
}


// --- adaptive and auto echo ---

// Adaptive echo's decisions depend on timing; replayed, they do not: a state
// saved while replaying (or live, then replayed) continues with the same
// decisions after the restore (the decisions taken are part of the state).
TEST(CheckpointStagesTest, AdaptiveEchoReplayedDecisionsResume) {
  const std::string decisions = "FRFFRRFRFFFRFRRFFRF";
  auto make = [&] {
    return FromVector(testing::MakeExamples(40))
        .Repeat(2)
        .AdaptiveEcho({.max_factor = 2.5,
                       .pool_size = 3,
                       .seed = 3,
                       .replay_decisions = decisions + "FFRFRRFFRFR" + decisions})
        .Shuffle({.buffer_size = 6, .seed = 4});
  };
  Pipeline<Example> p = make();
  const std::vector<std::string> all = Rest(p);
  EXPECT_GT(all.size(), 80u);
  EXPECT_EQ(CheckResumes<Example>(make, 24), all.size());
}

TEST(CheckpointStagesTest, AdaptiveEchoOfBatchesResumes) {
  auto make = [] {
    return FromVector(testing::MakeExamples(50))
        .Batch({.batch_size = 4})
        .AdaptiveEcho({.max_factor = 3, .pool_size = 1, .seed = 1, .replay_decisions = "FRRFRFFRR"});
  };
  EXPECT_EQ(CheckResumes<Batch>(make), 18u);  // 13 batches, 5 repeats
}

// Auto echo: once its factor is fixed, the continuation is the same.
TEST(CheckpointStagesTest, AutoEchoResumesAfterItsFactorIsFixed) {
  auto make = [] {
    auto ticks = std::make_shared<int64_t>(0);
    AutoEchoOptions options;
    options.adaptive = {.max_factor = 3.5,
                        .pool_size = 4,
                        .seed = 5,
                        .rate_window = 4,
                        .replay_decisions = "FRFFRFRRFF",
                        .clock = [ticks] { return *ticks += 1000; }};
    options.warmup = 12;
    return FromVector(testing::MakeExamples(60))
        .AutoEcho(std::move(options))
        .Shuffle({.buffer_size = 8, .seed = 6});
  };
  EXPECT_GT(CheckResumes<Example>(make, 16, 1, /*min_position=*/20), 60u);
}

TEST(CheckpointStagesTest, BadPoolInAStateIsDataLoss) {
  auto make = [] {
    return FromRange(0, 30).AdaptiveEcho(
        {.max_factor = 2, .pool_size = 2, .seed = 1, .replay_decisions = "FRF"});
  };
  Pipeline<int64_t> p = make();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(p.Next().ok());
  absl::StatusOr<std::string> state = p.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::string body = state->substr(0, state->size() - 4);
    const size_t at = std::uniform_int_distribution<size_t>(4, body.size() - 1)(rng);
    body[at] = static_cast<char>(body[at] ^ (1 << (trial % 8)));
    const uint32_t crc = MaskCrc32c(Crc32c(body));
    for (int i = 0; i < 4; ++i) body.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    Pipeline<int64_t> q = make();
    if (!q.RestoreState(body).ok()) continue;
    int n = 0;
    while (n < 1000) {
      absl::StatusOr<std::optional<int64_t>> next = q.Next();
      if (!next.ok() || !next->has_value()) break;
      ++n;
    }
    EXPECT_LT(n, 1000);
  }
}

}  // namespace
}  // namespace dataecho
