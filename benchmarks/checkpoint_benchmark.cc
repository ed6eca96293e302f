// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The cost of a pipeline checkpoint (docs/checkpoint.md): SaveState() of a
// pipeline whose Shuffle holds 10,000 elements, the state's size, and
// RestoreState() (which reads the buffered records again, each file once)
// against reading 10,000 records sequentially, from local files and over the
// loopback HTTP server with 5 ms latency per request.
//
//   build/benchmarks/checkpoint_benchmark --benchmark_min_time=0.2
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

constexpr int kFiles = 4;
constexpr int kRecordsPerFile = 10000;
constexpr int kRecordBytes = 1024;
constexpr int64_t kBuffer = 10000;

// 4 TFRecord files of 10,000 records of 1 KiB, written once.
const std::vector<std::string>& Paths() {
  static const auto* paths = [] {
    auto* out = new std::vector<std::string>;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / fmt::format("checkpoint_bench_{}", getpid());
    std::filesystem::create_directories(dir);
    for (int f = 0; f < kFiles; ++f) {
      auto writer = TFRecordWriter::Create((dir / fmt::format("part-{}.tfrecord", f)).string());
      for (int r = 0; r < kRecordsPerFile; ++r) {
        std::string payload(kRecordBytes, static_cast<char>('a' + (r % 26)));
        (void)(*writer)->Write(payload);
      }
      (void)(*writer)->Close();
      out->push_back((dir / fmt::format("part-{}.tfrecord", f)).string());
    }
    return out;
  }();
  return *paths;
}

Pipeline<Record> Records(std::shared_ptr<ObjectStore> store, std::vector<std::string> uris) {
  return From(MakeTFRecordSource(std::move(store), std::move(uris)))
      .Echo({.factor = 2.0, .seed = 1})
      .Shuffle({.buffer_size = kBuffer, .seed = 2});
}

Pipeline<Batch> Batches() {
  std::vector<Example> examples;
  for (uint64_t i = 0; i < 20000; ++i) {
    MutableBuffer mb(kRecordBytes);
    Example e;
    e.components.push_back(*Tensor::Make(DType::kUInt8, {kRecordBytes}, std::move(mb).Freeze()));
    e.source_index = i;
    examples.push_back(std::move(e));
  }
  return FromVector(std::move(examples))
      .Echo({.factor = 2.0, .seed = 1})
      .Shuffle({.buffer_size = kBuffer, .seed = 2})
      .Batch({.batch_size = 256});
}

template <typename T>
void Advance(Pipeline<T>& p, int n) {
  for (int i = 0; i < n; ++i) (void)p.Next();
}

// Times SaveState() of `p` and reports the state's size.
template <typename T>
void MeasureSave(benchmark::State& state, Pipeline<T>& p) {
  size_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<std::string> s = p.SaveState();
    if (!s.ok()) state.SkipWithError(s.status().ToString().c_str());
    bytes = s.ok() ? s->size() : 0;
    benchmark::DoNotOptimize(s);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_buffered"] = static_cast<double>(bytes) / kBuffer;
}

// TFRecord -> Echo(2) -> Shuffle(10,000), 15,000 records in.
void BM_SaveState_TFRecordEchoShuffle(benchmark::State& state) {
  Pipeline<Record> p = Records(OpenObjectStore(), Paths());
  Advance(p, 15000);
  MeasureSave(state, p);
}
BENCHMARK(BM_SaveState_TFRecordEchoShuffle)->Unit(benchmark::kMicrosecond);

// Examples -> Echo(2) -> Shuffle(10,000) -> Batch(256), 60 batches in.
void BM_SaveState_EchoShuffleBatch(benchmark::State& state) {
  Pipeline<Batch> p = Batches();
  Advance(p, 60);
  MeasureSave(state, p);
}
BENCHMARK(BM_SaveState_EchoShuffleBatch)->Unit(benchmark::kMicrosecond);

// The store and URIs: local files (arg 0) or the loopback HTTP server with
// 5 ms latency per request (arg 1).
struct Where {
  std::unique_ptr<testing::HttpServer> server;
  std::shared_ptr<ObjectStore> store;
  std::vector<std::string> uris;
};
Where Open(int64_t http) {
  Where w;
  w.store = OpenObjectStore();
  if (http == 0) {
    w.uris = Paths();
    return w;
  }
  w.server = *testing::HttpServer::Start(
      {.directory = std::filesystem::path(Paths()[0]).parent_path().string(),
       .latency = absl::Milliseconds(5)});
  for (int f = 0; f < kFiles; ++f) {
    w.uris.push_back(fmt::format("{}/part-{}.tfrecord", w.server->url(), f));
  }
  return w;
}

// Restore of the TFRecord pipeline: its 10,000 buffered records read again.
void BM_RestoreState(benchmark::State& state) {
  Where w = Open(state.range(0));
  Pipeline<Record> p = Records(w.store, w.uris);
  Advance(p, 15000);
  const std::string saved = *p.SaveState();
  for (auto _ : state) {
    Pipeline<Record> q = Records(w.store, w.uris);
    absl::Status s = q.RestoreState(saved);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
}
BENCHMARK(BM_RestoreState)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Reading 10,000 records sequentially from the start (what a restore is
// compared with).
void BM_Read10000Sequential(benchmark::State& state) {
  Where w = Open(state.range(0));
  for (auto _ : state) {
    StagePtr<Record> source = MakeTFRecordSource(w.store, w.uris);
    for (int i = 0; i < 10000; ++i) benchmark::DoNotOptimize(source->Next());
  }
}
BENCHMARK(BM_Read10000Sequential)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dataecho
