// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The cost of a pipeline checkpoint (docs/checkpoint.md): SaveState() of a
// pipeline whose Shuffle holds 10,000 elements, the state's size, and
// RestoreState() (which reads the buffered records again, each file once)
// against reading 10,000 records sequentially, from local files and over the
// loopback HTTP server with 5 ms latency per request.
//
// The README pipeline (TFRecord files of 28x28 images -> Map(decode, 4
// workers) -> Prefetch(256) -> Echo(2) -> Map(crop and flip, inline) ->
// Shuffle(10,000) -> Batch(256, fp16) -> Prefetch(2); arg 0: without the
// Shuffle): its state's size (bytes per buffered element with the Shuffle,
// the total without), SaveState()'s time, and the cost of saving after every
// step (steps/s with and without, run alternately in one process).
//
//   build/benchmarks/checkpoint_benchmark --benchmark_min_time=0.2
//   build/benchmarks/checkpoint_benchmark --benchmark_filter=Readme
//
// (BM_SaveEveryStep_Readme/shuffle:1/string:0 is the every-step figure with
// SaveStateCord(); string:1 the same with SaveState().) BM_CheckpointWrite_Readme
// and BM_CheckpointRead_Readme: that state in a checkpoint file
// (CheckpointDir), with and without a 100 MB model beside it.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "benchmark/benchmark.h"
#include "dataecho/augment.h"
#include "dataecho/checkpoint_dir.h"
#include "dataecho/formats/image_record.h"
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

// ---- The README pipeline ----

constexpr int kImageFiles = 4;
constexpr int kImagesPerFile = 10000;

// 4 TFRecord files of 10,000 Fashion-MNIST-sized images (uint8 [28, 28, 1]), written once.
const std::vector<std::string>& ImagePaths() {
  static const auto* paths = [] {
    auto* out = new std::vector<std::string>;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / fmt::format("checkpoint_bench_img_{}", getpid());
    std::filesystem::create_directories(dir);
    for (int f = 0; f < kImageFiles; ++f) {
      const std::string path = (dir / fmt::format("fmnist-{}.tfrecord", f)).string();
      auto writer = TFRecordWriter::Create(path);
      for (int i = 0; i < kImagesPerFile; ++i) {
        MutableBuffer pixels(28 * 28);
        for (int p = 0; p < 28 * 28; ++p)
          pixels.data()[p] = static_cast<uint8_t>((p * 7 + i) % 251);
        auto image = Tensor::Make(DType::kUInt8, {28, 28, 1}, std::move(pixels).Freeze());
        (void)(*writer)->Write(*EncodeImageRecord(*image, i % 10));
      }
      (void)(*writer)->Close();
      out->push_back(path);
    }
    return out;
  }();
  return *paths;
}

absl::StatusOr<Example> RandomCropAndFlip(Example ex) {
  static const auto augment = Compose(
      RandomCrop({.height = 28, .width = 28, .padding = 2, .seed = 11}), RandomFlip({.seed = 12}));
  return augment(std::move(ex));
}

// The README pipeline, over the files forever (Repeat), with or without its Shuffle(10,000).
Pipeline<Batch> Readme(bool shuffle) {
  auto examples = From(MakeTFRecordSource(OpenObjectStore(), ImagePaths()))
                      .Repeat(-1)
                      .Map(DecodeImageRecord, {.parallelism = 4})
                      .Prefetch({.depth = 256})
                      .Echo({.factor = 2.0, .seed = 1})
                      .Map(RandomCropAndFlip);
  if (shuffle) examples = std::move(examples).Shuffle({.buffer_size = kBuffer, .seed = 2});
  return std::move(examples)
      .Batch({.batch_size = 256, .cast = DType::kFloat16, .scale = 1.0f / 255})
      .Prefetch({.depth = 2});
}

// State size and SaveState() time of the README pipeline (arg: 1 with the
// Shuffle, 0 without), 100 batches in. bytes_per_buffered is meaningful with
// the Shuffle only; without it, "bytes" is the figure (goal: <= 4 KB).
void BM_SaveState_Readme(benchmark::State& state) {
  Pipeline<Batch> p = Readme(state.range(0) != 0);
  Advance(p, 100);
  MeasureSave(state, p);
}
BENCHMARK(BM_SaveState_Readme)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

// Saving after every step: blocks of 50 steps of two README pipelines, one
// that saves its state after every Next() and one that does not, run
// alternately (so both see the same machine; which of the two goes first
// alternates too); reports both rates and the loss in percent (goal: < 1 %).
// arg 0: 1 with the Shuffle, 0 without; arg 1: the API a trainer saving every
// step calls, 0 SaveStateCord() (what docs/checkpoint.md recommends: the
// state shares the snapshot the last Prefetch's producer sealed, no copy), 1
// SaveState() (a std::string: one copy of that snapshot). The previous
// state is dropped as the next one is taken, as a trainer that wrote it out
// would. (Both pipelines' Prefetches and parallel Maps take their input
// snapshots, sealed by their producers, which cost at most about 1 % of a
// producer's time whether or not a state is ever saved:
// internal/input_snapshots.h. The loss measured here is what a save adds;
// save_us is the mean time of one save call in the loop.)
void BM_SaveEveryStep_Readme(benchmark::State& state) {
  const bool shuffle = state.range(0) != 0;
  const bool as_string = state.range(1) != 0;
  Pipeline<Batch> plain = Readme(shuffle);
  Pipeline<Batch> saving = Readme(shuffle);
  Advance(plain, 50);  // both past the shuffle buffer's filling
  Advance(saving, 50);
  constexpr int kBlock = 50;
  double plain_s = 0, saving_s = 0;
  double save_s = 0;  // in the saves alone
  int64_t steps = 0;
  size_t state_bytes = 0;
  absl::Cord kept_cord;
  std::string kept_string;
  using Clock = std::chrono::steady_clock;
  auto run_plain = [&] {
    const auto t0 = Clock::now();
    for (int i = 0; i < kBlock; ++i) benchmark::DoNotOptimize(plain.Next());
    plain_s += std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto save = [&]() -> absl::Status {
    if (as_string) {
      absl::StatusOr<std::string> s = saving.SaveState();
      if (!s.ok()) return s.status();
      kept_string = *std::move(s);
      state_bytes = kept_string.size();
    } else {
      absl::StatusOr<absl::Cord> s = saving.SaveStateCord();
      if (!s.ok()) return s.status();
      kept_cord = *std::move(s);
      state_bytes = kept_cord.size();
    }
    return absl::OkStatus();
  };
  auto run_saving = [&]() -> bool {
    const auto t0 = Clock::now();
    for (int i = 0; i < kBlock; ++i) {
      benchmark::DoNotOptimize(saving.Next());
      const auto s0 = Clock::now();
      if (absl::Status s = save(); !s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        return false;
      }
      save_s += std::chrono::duration<double>(Clock::now() - s0).count();
    }
    saving_s += std::chrono::duration<double>(Clock::now() - t0).count();
    return true;
  };
  bool plain_first = true;
  for (auto _ : state) {
    if (plain_first) run_plain();
    if (!run_saving()) return;
    if (!plain_first) run_plain();
    plain_first = !plain_first;
    steps += kBlock;
  }
  const double plain_rate = static_cast<double>(steps) / plain_s;
  const double saving_rate = static_cast<double>(steps) / saving_s;
  state.counters["steps_per_s"] = plain_rate;
  state.counters["steps_per_s_saving"] = saving_rate;
  state.counters["loss_pct"] = 100.0 * (1.0 - saving_rate / plain_rate);
  state.counters["state_bytes"] = static_cast<double>(state_bytes);
  state.counters["save_us"] = 1e6 * save_s / static_cast<double>(steps);
}
BENCHMARK(BM_SaveEveryStep_Readme)
    ->ArgNames({"shuffle", "string"})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({1, 1})
    ->Args({0, 1})
    ->Unit(benchmark::kMillisecond)
    // Wall time decides the length: the timing thread sleeps through most
    // of a step, so 2 s of its CPU time would be minutes.
    ->UseRealTime()
    ->MinTime(2.0);

// SaveStateCord() of the README pipeline alone (arg: 1 with the Shuffle, 0
// without), 100 batches in: BM_SaveState_Readme's SaveState() without the
// copy of the snapshot.
void BM_SaveStateCord_Readme(benchmark::State& state) {
  Pipeline<Batch> p = Readme(state.range(0) != 0);
  Advance(p, 100);
  size_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<absl::Cord> s = p.SaveStateCord();
    if (!s.ok()) state.SkipWithError(s.status().ToString().c_str());
    bytes = s.ok() ? s->size() : 0;
    benchmark::DoNotOptimize(s);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SaveStateCord_Readme)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

// A checkpoint file of the README pipeline's state (with the Shuffle, 100
// batches in) and a model of arg 0 MB beside it (CheckpointDir, fsyncs
// included): what the training loop waits for per checkpoint. arg 1 = 0: a
// synchronous Write() (temporary file, fsync, rename, fsync of the
// directory); 1: SaveStateCord() and a background Write() (the trainers'
// setting; the write itself is finished outside the timed part).
void BM_CheckpointWrite_Readme(benchmark::State& state) {
  Pipeline<Batch> p = Readme(true);
  Advance(p, 100);
  const std::string dir = std::filesystem::temp_directory_path() / "dataecho_bench_ckpt";
  std::filesystem::remove_all(dir);
  const bool background = state.range(1) != 0;
  absl::StatusOr<std::unique_ptr<CheckpointDir>> ck =
      CheckpointDir::OpenForWriting(dir, {.keep = 2, .background = background});
  if (!ck.ok()) return state.SkipWithError(ck.status().ToString().c_str());
  const absl::Cord model(std::string(static_cast<size_t>(state.range(0)) << 20, 'w'));
  int64_t step = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<absl::Cord> s = p.SaveStateCord();
    if (!s.ok()) return state.SkipWithError(s.status().ToString().c_str());
    bytes = s->size() + model.size();
    absl::Status w = (*ck)->Write(++step, {{"pipeline", *s}, {"model", model}});
    if (!w.ok()) return state.SkipWithError(w.ToString().c_str());
    state.PauseTiming();
    if (absl::Status f = (*ck)->Flush(); !f.ok()) return state.SkipWithError(f.ToString().c_str());
    state.ResumeTiming();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  ck->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CheckpointWrite_Readme)
    ->ArgNames({"model_mb", "background"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({100, 0})
    ->Args({100, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    // A fixed count: with the write itself outside the timed part, a time
    // budget would run thousands of 100 MB writes.
    ->Iterations(20);

// Reading it back at a resume (ReadNewest: header, then the body, CRCs),
// with a model of arg 0 MB.
void BM_CheckpointRead_Readme(benchmark::State& state) {
  Pipeline<Batch> p = Readme(true);
  Advance(p, 100);
  const std::string dir = std::filesystem::temp_directory_path() / "dataecho_bench_ckpt_read";
  std::filesystem::remove_all(dir);
  absl::StatusOr<absl::Cord> s = p.SaveStateCord();
  absl::StatusOr<std::unique_ptr<CheckpointDir>> ck = CheckpointDir::OpenForWriting(dir);
  if (!s.ok() || !ck.ok()) return state.SkipWithError("cannot write the checkpoint");
  const absl::Cord model(std::string(static_cast<size_t>(state.range(0)) << 20, 'w'));
  if (!(*ck)->Write(1, {{"pipeline", *s}, {"model", model}}).ok()) {
    return state.SkipWithError("cannot write the checkpoint");
  }
  for (auto _ : state) {
    absl::StatusOr<std::optional<Checkpoint>> c = (*ck)->ReadNewest();
    if (!c.ok() || !c->has_value()) return state.SkipWithError("cannot read the checkpoint");
    benchmark::DoNotOptimize(c);
  }
  ck->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CheckpointRead_Readme)
    ->ArgName("model_mb")
    ->Arg(0)
    ->Arg(100)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace dataecho
