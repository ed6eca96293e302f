// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The builder steps beyond echoing: Cache replay, PaddedBatch, Filter,
// Interleave, Zip, each next to the plain stage it should cost about as much
// as. items_per_second counts emitted elements, or batch rows.
//
//   build/benchmarks/builder_benchmark --benchmark_min_time=1
#include <cstring>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "dataecho/pipeline.h"
#include "in_memory.h"

namespace dataecho {
namespace {

using bench::Cycle;

// Examples with one uint8 [784] component (an image), as core_benchmark's.
const std::vector<Example>& Images() { return bench::Dataset(784); }

// Token sequences: int32 [n], n uniform-ish in [1, 512] (mean 256), or all
// `fixed` long.
std::vector<Example> Sequences(int64_t count, int64_t fixed = 0) {
  std::vector<Example> out;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = fixed > 0 ? fixed : 1 + (i * 7919) % 512;
    MutableBuffer mb(static_cast<size_t>(n) * 4);
    std::memset(mb.data(), 1, mb.size());
    Example e;
    e.components.push_back(*Tensor::Make(DType::kInt32, {n}, std::move(mb).Freeze()));
    e.source_index = static_cast<uint64_t>(i);
    out.push_back(std::move(e));
  }
  return out;
}

// Reference: elements handed out from memory by a source.
void BM_InMemorySource(benchmark::State& state) {
  auto p = Cycle(Images());
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InMemorySource);

// Cache replaying a 60,000-image epoch from memory (the first pass is read in
// setup); a new epoch starts whenever one ends.
void BM_CacheReplay(benchmark::State& state) {
  auto stage = FromVector(Images()).Cache().Release();
  auto& cache = static_cast<CacheStage<Example>&>(**stage);
  while ((*cache.Next()).has_value()) {
  }
  uint32_t epoch = 0;
  (void)cache.Restart(++epoch);
  for (auto _ : state) {
    auto r = cache.Next();
    if (!r->has_value()) {
      (void)cache.Restart(++epoch);
      r = cache.Next();
    }
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheReplay);

// Pulls batches of p for the whole run: state.range(0) rows each, counted
// as rows of the sequences' mean length (256 int32s).
template <typename P>
void PullBatches(benchmark::State& state, P& p) {
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 256 * 4);
}

// Reference: Batch of equal-length rows of the sequences' mean length.
void BM_BatchFixedLength(benchmark::State& state) {
  auto p = Cycle(Sequences(4096, 256)).Batch({.batch_size = state.range(0)});
  PullBatches(state, p);
}
BENCHMARK(BM_BatchFixedLength)->Arg(32)->Arg(256);

// PaddedBatch of sequences of 1..512 int32s (mean 256), with mask and lengths;
// bytes_per_second counts the data bytes of the rows.
void BM_PaddedBatch(benchmark::State& state) {
  auto p = Cycle(Sequences(4096)).PaddedBatch({.batch_size = state.range(0)});
  PullBatches(state, p);
  state.counters["padding_fraction"] = p.Stats().back().Extra("padding_fraction");
}
BENCHMARK(BM_PaddedBatch)->Arg(32)->Arg(256);

// The same behind a Shuffle of 8,192 of 16,384 sequences (16 MB): rows come
// in random order, so each row's copy would wait on memory without the
// prefetch a few rows ahead (docs/benchmarks.md, "Prefetching rows").
void BM_PaddedBatchShuffled(benchmark::State& state) {
  auto p = Cycle(Sequences(16384))
               .Shuffle({.buffer_size = 8192, .seed = 1})
               .PaddedBatch({.batch_size = state.range(0)});
  PullBatches(state, p);
}
BENCHMARK(BM_PaddedBatchShuffled)->Arg(256);

// PaddedBatch of the equal-length rows of BM_BatchFixedLength (no padding):
// its cost next to Batch's when there is nothing to pad (masks and lengths
// are still written).
void BM_PaddedBatchFixedLength(benchmark::State& state) {
  auto p = Cycle(Sequences(4096, 256)).PaddedBatch({.batch_size = state.range(0)});
  PullBatches(state, p);
}
BENCHMARK(BM_PaddedBatchFixedLength)->Arg(32)->Arg(256);

void BM_Filter(benchmark::State& state) {
  auto p = Cycle(Images()).Filter([](const Example& e) { return e.source_index % 2 == 0; });
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Filter);

// Four in-memory pipelines read round-robin.
void BM_Interleave(benchmark::State& state) {
  auto p = FromRange(0, 4).Interleave([](int64_t) { return Cycle(Images()); },
                                      {.cycle_length = 4, .block_length = 1});
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Interleave);

void BM_Zip(benchmark::State& state) {
  auto p = Cycle(Images()).Zip(Cycle(Images()));
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Zip);

// Four in-memory pipelines mixed with weights (the draw, the per-input
// accounting and the references kept for a later Shuffle); arg 1: weights of
// fresh items (the realized factors enter each draw).
void BM_Mix(benchmark::State& state) {
  std::vector<Pipeline<Example>> inputs;
  for (int i = 0; i < 4; ++i) inputs.push_back(Cycle(Images()));
  auto p = Mix(std::move(inputs),
               {.weights = {0.4, 0.3, 0.2, 0.1},
                .seed = 1,
                .weights_of = state.range(0) != 0 ? MixWeightsOf::kFresh : MixWeightsOf::kEmitted});
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Mix)->Arg(0)->Arg(1);

}  // namespace
}  // namespace dataecho
