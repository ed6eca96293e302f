// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// End-to-end reliability: a full Fashion-MNIST epoch read over HTTP while the
// server fails at seeded random offsets, through echo, shuffle and batch,
// must deliver every record exactly e times; and large records through a
// prefetch queue and a shuffle buffer stay within the configured memory cap.
// Figures are printed for docs/reliability.md.
#include <sys/resource.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using testing::HttpFault;
using testing::HttpServer;
using testing::TempDir;

constexpr char kFashionDir[] = "/usr/share/datasets/fashion-mnist/";
constexpr int kShards = 8;

// Converts the Fashion-MNIST training set into kShards TFRecord shards of
// image records: row r goes to shard r % kShards. Returns the labels by row.
std::vector<int64_t> ConvertFashionMnist(const TempDir& dir) {
  std::shared_ptr<ObjectStore> local = OpenObjectStore();
  auto source = MakeIdxSource(local, std::string(kFashionDir) + "train-images-idx3-ubyte.gz",
                              std::string(kFashionDir) + "train-labels-idx1-ubyte.gz");
  std::vector<std::unique_ptr<TFRecordWriter>> writers;
  for (int s = 0; s < kShards; ++s) {
    auto w = TFRecordWriter::Create(dir.File(fmt::format("train-{:05d}-of-{:05d}", s, kShards)));
    EXPECT_TRUE(w.ok()) << w.status();
    if (!w.ok()) return {};
    writers.push_back(*std::move(w));
  }
  std::vector<int64_t> labels;
  while (true) {
    auto ex = source->Next();
    EXPECT_TRUE(ex.ok()) << ex.status();
    if (!ex.ok() || !ex->has_value()) break;
    auto payload = EncodeImageRecord((*ex)->components[0], (*ex)->label);
    EXPECT_TRUE(payload.ok()) << payload.status();
    if (!payload.ok()) return {};
    EXPECT_TRUE(writers[labels.size() % kShards]->Write(*payload).ok());
    labels.push_back((*ex)->label);
  }
  for (auto& w : writers) EXPECT_TRUE(w->Close().ok());
  return labels;
}

TEST(SoakTest, FashionMnistEpochOverFaultyHttpDeliversEveryRecordExactlyETimes) {
  TempDir dir;
  const std::vector<int64_t> labels = ConvertFashionMnist(dir);
  ASSERT_EQ(labels.size(), 60000u);
  auto server = HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status();

  ObjectStoreOptions options;
  options.retry.initial_backoff = absl::Milliseconds(1);
  options.retry.max_backoff = absl::Milliseconds(10);
  options.retry.max_attempts = 8;
  options.http.chunk_size = 256 << 10;
  // Long enough that a slow machine (a sanitizer beside a busy core) never
  // looks stalled; the scripted stall below lasts longer than any run.
  options.http.stall_timeout = absl::Seconds(5);
  std::shared_ptr<ObjectStore> store = OpenObjectStore(options);
  std::vector<std::string> urls;
  for (int s = 0; s < kShards; ++s)
    urls.push_back(fmt::format("{}/train-{:05d}-of-{:05d}", (*server)->url(), s, kShards));
  if (store->Stat(urls[0]).status().code() == absl::StatusCode::kUnimplemented) {
    GTEST_SKIP() << "this build has no HTTP store";
  }

  // Seeded faults at random offsets of random requests: every kind the
  // store retries (resets, 5xx, 429, short bodies, a shifted Content-Range,
  // a 200 to a ranged request, one stall).
  std::mt19937 rng(8);
  const uint64_t shard_bytes =
      60000 / kShards * (kTFRecordHeaderBytes + kImageRecordHeaderBytes + 784 + 4);
  const uint64_t chunk = options.http.chunk_size;
  int faults = 0;
  for (int s = 0; s < kShards; ++s) {
    for (int k = 0; k < 6; ++k) {
      HttpFault f;
      f.path_substring = fmt::format("train-{:05d}", s);
      f.skip = static_cast<int>(rng() % (shard_bytes / chunk));
      f.after_bytes = rng() % chunk;
      switch (rng() % 7) {
        case 0: f.kind = HttpFault::Kind::kReset; break;
        case 1:
          f.kind = HttpFault::Kind::kStatus;
          f.status = 500 + static_cast<int>(rng() % 2) * 3;
          break;
        case 2:
          f.kind = HttpFault::Kind::kStatus;
          f.status = 429;
          f.retry_after = "0";
          break;
        case 3: f.kind = HttpFault::Kind::kShortBody; break;
        case 4:
          f.kind = HttpFault::Kind::kWrongContentRange;
          f.range_shift = 1 + static_cast<int64_t>(rng() % 1000);
          break;
        case 5: f.kind = HttpFault::Kind::kIgnoreRange; break;
        case 6:
          f.kind = HttpFault::Kind::kReset;
          f.after_bytes = 0;
          break;
      }
      (*server)->AddFault(f);
      ++faults;
    }
  }
  (*server)->AddFault({.kind = HttpFault::Kind::kStall,
                       .path_substring = "train-00003",
                       .after_bytes = 5000,
                       .stall = absl::Seconds(120),  // woken when the server goes
                       .skip = 2});
  ++faults;

  constexpr int kEcho = 3;
  InterleaveOptions interleave;
  interleave.cycle_length = 4;
  auto pipeline = From(MakeTFRecordSource(store, urls, {}, interleave))
                      .Map([](Record r) { return DecodeImageRecord(r); }, {.parallelism = 2})
                      .Prefetch({.depth = 64})
                      .Echo({.factor = kEcho, .seed = 3})
                      .Shuffle({.buffer_size = 4096, .seed = 4})
                      .Batch({.batch_size = 256})
                      .Prefetch({.depth = 2});
  ASSERT_TRUE(pipeline.status().ok()) << pipeline.status();

  std::vector<int> seen(labels.size(), 0);
  int64_t rows = 0, fresh = 0, bad = 0;
  while (true) {
    auto b = pipeline.Next();
    ASSERT_TRUE(b.ok()) << b.status();
    if (!b->has_value()) break;
    const Batch& batch = **b;
    const absl::Span<const int64_t> src = batch.source_indices.data<int64_t>();
    const absl::Span<const int64_t> lab = batch.labels.data<int64_t>();
    for (int64_t i = 0; i < batch.num_rows; ++i) {
      const auto k = static_cast<size_t>(i);
      const uint64_t file = static_cast<uint64_t>(src[k]) >> kRecordIndexBits;
      const uint64_t pos = static_cast<uint64_t>(src[k]) & ((uint64_t{1} << kRecordIndexBits) - 1);
      const uint64_t row = pos * kShards + file;  // the Fashion-MNIST row
      if (row >= labels.size() || labels[row] != lab[k]) {
        ++bad;
        continue;
      }
      ++seen[row];
    }
    rows += batch.num_rows;
    fresh += batch.fresh_rows;
  }
  int64_t lost = 0, duplicated = 0;
  for (int c : seen) {
    if (c < kEcho) lost += kEcho - c;
    if (c > kEcho) duplicated += c - kEcho;
  }
  std::printf(
      "soak: %zu records x e=%d over HTTP, %lld faults fired of %d scripted, %lld requests: "
      "rows %lld, fresh %lld, records lost: %lld, duplicated: %lld, mismatched: %lld\n",
      labels.size(), kEcho, static_cast<long long>((*server)->faults_fired()), faults,
      static_cast<long long>((*server)->request_count()), static_cast<long long>(rows),
      static_cast<long long>(fresh), static_cast<long long>(lost),
      static_cast<long long>(duplicated), static_cast<long long>(bad));
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicated, 0);
  EXPECT_EQ(rows, static_cast<int64_t>(labels.size()) * kEcho);
  EXPECT_EQ(fresh, static_cast<int64_t>(labels.size()));
  EXPECT_GE((*server)->faults_fired(), faults / 2);  // most scripted faults were met
}

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

double StatExtra(const std::vector<StageStats>& stats, const std::string& stage,
                 const std::string& key) {
  for (const StageStats& s : stats) {
    if (s.name != stage) continue;
    for (const auto& [k, v] : s.extra) {
      if (k == key) return v;
    }
  }
  return -1;
}

// 1 MiB records: a prefetch queue of 8 and a shuffle buffer of 24 under a
// 32 MiB cap (24 fit). The shuffle never holds more than the cap; the peak
// RSS of the process is reported.
TEST(MemoryBoundTest, LargeRecordsThroughPrefetchAndShuffleStayWithinTheCap) {
  constexpr int64_t kRecord = 1 << 20, kCap = 32 << 20, kRecords = 160;
  const int64_t rss_before = PeakRssBytes();
  auto p =
      FromRange(0, kRecords)
          .Map([](int64_t i) { return testing::MakeExample(static_cast<uint64_t>(i), kRecord); },
               {.parallelism = 2})
          .Prefetch({.depth = 8})
          .Echo({.factor = 2, .seed = 1})
          .Shuffle({.buffer_size = 24, .seed = 2, .max_bytes = kCap})
          .Prefetch({.depth = 2});
  ASSERT_TRUE(p.status().ok());
  std::vector<int> seen(kRecords, 0);
  int64_t n = 0;
  while (true) {
    auto e = p.Next();
    ASSERT_TRUE(e.ok()) << e.status();
    if (!e->has_value()) break;
    ++seen[(*e)->source_index];
    ++n;
  }
  EXPECT_EQ(n, 2 * kRecords);
  for (int c : seen) EXPECT_EQ(c, 2);
  const double peak_held = StatExtra(p.Stats(), "shuffle", "peak_bytes_held");
  EXPECT_GT(peak_held, 0);
  EXPECT_LE(peak_held, static_cast<double>(kCap));
  const int64_t rss_after = PeakRssBytes();
  std::printf(
      "memory: shuffle peak_bytes_held %.1f MiB (cap %lld MiB), process peak RSS %.1f MiB "
      "(%.1f MiB before the pipeline)\n",
      peak_held / (1 << 20), static_cast<long long>(kCap >> 20),
      static_cast<double>(rss_after) / (1 << 20), static_cast<double>(rss_before) / (1 << 20));
}

TEST(MemoryBoundTest, ShuffleBufferTooLargeForTheCapIsResourceExhausted) {
  constexpr int64_t kRecord = 1 << 20;
  auto p =
      FromRange(0, 100)
          .Map([](int64_t i) { return testing::MakeExample(static_cast<uint64_t>(i), kRecord); })
          .Prefetch({.depth = 4})
          .Shuffle({.buffer_size = 64, .seed = 2, .max_bytes = 16 * kRecord});
  ASSERT_TRUE(p.status().ok());
  auto first = p.Next();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), absl::StatusCode::kResourceExhausted) << first.status();
  EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kResourceExhausted);  // sticky
}

}  // namespace
}  // namespace dataecho
