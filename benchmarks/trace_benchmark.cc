// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// What the pipeline timeline (trace.h) costs: the README pipeline's shape
// over in-memory 28x28 images (Map(decode stand-in, 4 workers) ->
// Prefetch(256) -> Echo(2) -> Map(crop and flip) -> Shuffle(10,000) ->
// Batch(256, fp16) -> Prefetch(2)), batches per second with no trace and
// with one recording, in blocks of 50 batches run alternately in one process
// (so both see the same machine); "loss_pct" is the throughput lost to the
// trace (goal: <= 5 %). BM_TraceOffCheck is the cost of one disabled check.
//
//   build/benchmarks/trace_benchmark --benchmark_min_time=2
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "dataecho/augment.h"
#include "dataecho/pipeline.h"
#include "dataecho/trace.h"
#include "testing/synthetic_images.h"

namespace dataecho {
namespace {

Pipeline<Batch> Readme() {
  const auto crop_and_flip = Compose(
      RandomCrop({.height = 28, .width = 28, .padding = 2, .seed = 11}), RandomFlip({.seed = 12}));
  return FromVector(testing::SyntheticImages(20000, 28, 28))
      .Repeat(-1)
      .Map([](Example e) -> absl::StatusOr<Example> { return e; }, {.parallelism = 4})
      .Prefetch({.depth = 256})
      .Echo({.factor = 2.0, .seed = 1})
      .Map(crop_and_flip)
      .Shuffle({.buffer_size = 10000, .seed = 2})
      .Batch({.batch_size = 256, .cast = DType::kFloat16, .scale = 1.0f / 255})
      .Prefetch({.depth = 2});
}

double BlockSeconds(Pipeline<Batch>& p, int batches) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < batches; ++i) benchmark::DoNotOptimize(p.Next());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_TraceCost_Readme(benchmark::State& state) {
  const std::string path = std::filesystem::temp_directory_path() / "dataecho_trace_bench.json";
  Pipeline<Batch> plain = Readme();
  Pipeline<Batch> traced = Readme();
  BlockSeconds(plain, 40);  // fill the shuffle buffers
  BlockSeconds(traced, 40);
  double off = 0, on = 0;
  int64_t blocks = 0;
  for (auto _ : state) {
    const bool traced_first = blocks % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      if ((k == 0) == traced_first) {
        // A trace per block, so that the cap is never reached.
        if (!StartTrace(path).ok()) return state.SkipWithError("cannot start the trace");
        on += BlockSeconds(traced, 50);
        if (!StopTrace().ok()) return state.SkipWithError("cannot write the trace");
      } else {
        off += BlockSeconds(plain, 50);
      }
    }
    ++blocks;
  }
  state.counters["batches_per_s_off"] = 50.0 * static_cast<double>(blocks) / off;
  state.counters["batches_per_s_on"] = 50.0 * static_cast<double>(blocks) / on;
  state.counters["loss_pct"] = 100.0 * (1.0 - off / on);
  std::filesystem::remove(path);
}
BENCHMARK(BM_TraceCost_Readme)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// One disabled check (what each traced place costs when no trace runs).
void BM_TraceOffCheck(benchmark::State& state) {
  for (auto _ : state) {
    if (TraceEnabled()) TraceInstant("never", "bench");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TraceOffCheck);

}  // namespace
}  // namespace dataecho
