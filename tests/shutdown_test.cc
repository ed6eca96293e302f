// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Shutdown torture: 1,000 pipelines over every stage and store (local
// TFRecord and IDX files, interleaved sources, a fault-injecting store, HTTP
// with latency and with a transfer stalled mid-body), each destroyed or
// cancelled at a random moment. Nothing may hang (the ctest TIMEOUT fails a
// hang), leak (the ASan build's leak check) or leave a thread behind (counted
// in /proc/self/task before and after).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/fault_store.h"
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

int ThreadCount() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

// Threads that were joined may linger in /proc for a moment: wait (bounded)
// for the count to come back down to `expected`.
int SettledThreadCount(int expected) {
  int n = ThreadCount();
  for (int i = 0; i < 500 && n > expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = ThreadCount();
  }
  return n;
}

// Starts a thread, joins it and waits (bounded) until it has left
// /proc/self/task too, so that a count taken next does not include it.
void StartAndForgetAThread() {
  pid_t tid = 0;
  std::thread([&tid] { tid = gettid(); }).join();
  const std::string task = fmt::format("/proc/self/task/{}", tid);
  struct stat st;
  for (int i = 0; i < 500 && stat(task.c_str(), &st) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

constexpr int kShards = 4;
constexpr int kRecordsPerShard = 64;

// Small image records in TFRecord shards, plus a tiny IDX pair.
struct Dataset {
  TempDir dir;
  std::vector<std::string> shards;
  std::string idx_images, idx_labels;
};

void MakeDataset(Dataset* d) {
  for (int s = 0; s < kShards; ++s) {
    const std::string path = d->dir.File(fmt::format("part-{}.tfrecord", s));
    auto w = TFRecordWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = 0; i < kRecordsPerShard; ++i) {
      MutableBuffer pixels(8 * 8);
      for (size_t p = 0; p < pixels.size(); ++p) pixels.data()[p] = static_cast<uint8_t>(i + p);
      auto t = Tensor::Make(DType::kUInt8, {8, 8, 1}, std::move(pixels).Freeze());
      ASSERT_TRUE(t.ok());
      auto payload = EncodeImageRecord(*t, i % 10);
      ASSERT_TRUE(payload.ok());
      ASSERT_TRUE((*w)->Write(*payload).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
    d->shards.push_back(path);
  }
  std::string images = {0, 0, 8, 3, 0, 0, 0, 100, 0, 0, 0, 4, 0, 0, 0, 4};
  images.append(100 * 16, '\x07');
  std::string labels = {0, 0, 8, 1, 0, 0, 0, 100};
  labels.append(100, '\x03');
  d->idx_images = d->dir.File("images-idx3-ubyte");
  d->idx_labels = d->dir.File("labels-idx1-ubyte");
  testing::WriteFileOrDie(d->idx_images, images);
  testing::WriteFileOrDie(d->idx_labels, labels);
}

absl::StatusOr<Example> Decode(Record r) { return DecodeImageRecord(r); }

// The full example-echoing chain on top of `source`.
Pipeline<Batch> Chain(Pipeline<Example> source, uint64_t seed) {
  return std::move(source)
      .Prefetch({.depth = 8})
      .Echo({.factor = 2.5, .seed = seed})
      .Map([](Example e) { return e; }, {.parallelism = 2})
      .Shuffle({.buffer_size = 32, .seed = seed})
      .Batch({.batch_size = 8})
      .Prefetch({.depth = 2});
}

Pipeline<Batch> FromShards(std::shared_ptr<ObjectStore> store, std::vector<std::string> uris,
                           int cycle, uint64_t seed) {
  InterleaveOptions interleave;
  interleave.cycle_length = cycle;
  interleave.buffered_records = 4;
  TFRecordReaderOptions options;
  options.buffer_size = 256;  // many small reads: more moments to be stopped at
  options.read_ahead = 512;
  return Chain(From(MakeTFRecordSource(std::move(store), std::move(uris), options, interleave))
                   .Map(Decode, {.parallelism = 3}),
               seed);
}

std::vector<std::string> Urls(const HttpServer& server) {
  std::vector<std::string> urls;
  for (int s = 0; s < kShards; ++s)
    urls.push_back(fmt::format("{}/part-{}.tfrecord", server.url(), s));
  return urls;
}

// True if this build's store speaks HTTP (the network stores may be absent).
bool HttpAvailable(ObjectStore& store, const HttpServer& server) {
  absl::StatusOr<ObjectInfo> info = store.Stat(Urls(server)[0]);
  return info.status().code() != absl::StatusCode::kUnimplemented;
}

TEST(ShutdownTortureTest, ThousandPipelinesDestroyedAtRandomMomentsLeaveNoThread) {
  Dataset data;
  ASSERT_NO_FATAL_FAILURE(MakeDataset(&data));
  // Runtime helper threads (a sanitizer's) start with the first thread: start
  // one before taking the baseline. A joined thread lingers in /proc for a
  // moment, so the baseline is taken once it has gone.
  StartAndForgetAThread();
  const int threads_before = ThreadCount();
  ASSERT_GT(threads_before, 0);
  int http_runs = 0;
  {
    auto server =
        HttpServer::Start({.directory = data.dir.path(), .latency = absl::Microseconds(200)});
    ASSERT_TRUE(server.ok()) << server.status();
    auto stalled = HttpServer::Start({.directory = data.dir.path()});
    ASSERT_TRUE(stalled.ok()) << stalled.status();
    // Every GET on this server stalls after 100 bytes for far longer than the test.
    (*stalled)->AddFault({.kind = HttpFault::Kind::kStall,
                          .after_bytes = 100,
                          .stall = absl::Seconds(600),
                          .times = -1});
    std::shared_ptr<ObjectStore> local = OpenObjectStore();
    const bool http = HttpAvailable(*local, **server);
    if (!http) std::printf("HTTP store unavailable in this build: HTTP cases run on local files\n");

    std::mt19937 rng(20261129);
    constexpr int kIterations = 1000;
    constexpr int kKinds = 7;
    for (int i = 0; i < kIterations; ++i) {
      const int kind = i % kKinds;
      const uint64_t seed = static_cast<uint64_t>(i);
      std::shared_ptr<ObjectStore> store =
          OpenObjectStore();  // per pipeline, so its threads must go too
      Pipeline<Batch> p(absl::InternalError("unset"));
      switch (kind) {
        case 0:  // local shards, one after the other
          p = FromShards(store, data.shards, 1, seed);
          break;
        case 1:  // local shards, interleaved over 3 threads
          p = FromShards(store, data.shards, 3, seed);
          break;
        case 2: {  // failing reads somewhere in the middle of a shard
          auto faulty = std::make_shared<FaultInjectingStore>(store);
          faulty->AddFault({.op = Fault::Op::kRead,
                            .uri_substring = "part-1",
                            .at_offset = static_cast<uint64_t>(rng() % 2000),
                            .times = -1});
          p = FromShards(faulty, data.shards, 2, seed);
          break;
        }
        case 3:  // IDX images zipped with labels
          p = Chain(From(MakeIdxSource(store, data.idx_images, data.idx_labels)), seed);
          break;
        case 4:  // an in-memory source behind a slow Throttle stage
          p = Chain(
              FromRange(0, 1000).Throttle({.latency = absl::Microseconds(300)}).Map([](int64_t k) {
                return testing::MakeExample(static_cast<uint64_t>(k));
              }),
              seed);
          break;
        case 5:  // HTTP with latency, interleaved
          if (http) ++http_runs;
          p = FromShards(store, http ? Urls(**server) : data.shards, 2, seed);
          break;
        case 6:  // HTTP transfers that stall mid-body
          if (http) ++http_runs;
          p = FromShards(store, http ? Urls(**stalled) : data.shards, 2, seed);
          break;
      }
      ASSERT_TRUE(p.status().ok()) << p.status();
      const int reads = static_cast<int>(rng() % 3);
      const auto pause = std::chrono::microseconds(rng() % 1500);
      if (kind == 6 || rng() % 2 == 0) {
        // Destroy (or cancel) while a consumer is blocked inside Next().
        std::thread consumer([&] {
          for (int r = 0; r < reads + 100; ++r) {
            auto next = p.Next();
            if (!next.ok() || !next->has_value()) return;
          }
        });
        std::this_thread::sleep_for(pause);
        p.Cancel();
        consumer.join();  // hangs (ctest TIMEOUT) if Cancel does not wake it
      } else {
        for (int r = 0; r < reads; ++r) {
          auto next = p.Next();
          if (!next.ok() || !next->has_value()) break;
        }
        std::this_thread::sleep_for(pause);
      }
      // `p` and `store` are destroyed here, threads in whatever state they are.
    }
  }  // the servers stop here (their connection threads end)
  EXPECT_EQ(SettledThreadCount(threads_before), threads_before);
  std::printf("pipelines: 1000, of them over HTTP: %d\n", http_runs);
}

}  // namespace
}  // namespace dataecho
