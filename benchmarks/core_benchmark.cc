// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Core stage throughput. Every benchmark reports items_per_second, where an
// item is one emitted element (Echo, Shuffle, Prefetch) or one batch row.
//
//   build/benchmarks/core_benchmark --benchmark_min_time=1
//
// Heap allocations are counted (operator new is replaced below) where a
// benchmark reports them ("allocs_per_item", "allocs_per_batch").
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/internal/random.h"
#include "dataecho/pipeline.h"
#include "in_memory.h"

namespace dataecho {
namespace {

// Counted while `g_count_allocations` is set (one benchmark at a time).
std::atomic<bool> g_count_allocations{false};
std::atomic<int64_t> g_allocations{0};

void CountAllocation() {
  if (g_count_allocations.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace
}  // namespace dataecho

// Every allocation goes through these two (new[] calls them; the default
// operator delete frees what they return).
void* operator new(size_t n) {
  dataecho::CountAllocation();
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) std::abort();
  return p;
}
void* operator new(size_t n, std::align_val_t alignment) {
  dataecho::CountAllocation();
  const size_t a = static_cast<size_t>(alignment);
  void* p = std::aligned_alloc(a, (std::max<size_t>(n, 1) + a - 1) / a * a);
  if (p == nullptr) std::abort();
  return p;
}

namespace dataecho {
namespace {

using bench::Cycle;
using bench::Dataset;

// CPU time of the whole process (every thread), in nanoseconds.
int64_t ProcessCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Pulls one element of `p` per iteration; each element holds `items` items.
// Counter "process_cpu_ns": CPU time of all threads per iteration (the
// pipeline's threads included), which a busy machine disturbs less than
// wall time. Counter "allocs_per_item": heap allocations of every thread per
// item in the steady state (after two warm-up elements, which fill buffers
// and stock pools).
template <typename P>
void PullEach(benchmark::State& state, P& p, int64_t items = 1) {
  for (int i = 0; i < 2; ++i) benchmark::DoNotOptimize(p.Next());
  g_allocations.store(0);
  g_count_allocations.store(true);
  const int64_t cpu0 = ProcessCpuNanos();
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  const int64_t cpu = ProcessCpuNanos() - cpu0;
  g_count_allocations.store(false);
  const auto n = static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["process_cpu_ns"] = static_cast<double>(cpu) / n;
  state.counters["allocs_per_item"] =
      static_cast<double>(g_allocations.load()) / (n * static_cast<double>(items));
}

void BM_Echo(benchmark::State& state) {
  auto p = Cycle(Dataset(784)).Echo({.factor = 4});
  PullEach(state, p);
}
BENCHMARK(BM_Echo);

// The floor under BM_Echo: copying and destroying one Example (about one
// per emitted item), and the reference-count part of it alone.
void BM_ExampleCopy(benchmark::State& state) {
  const Example& e = Dataset(784)[0];
  for (auto _ : state) {
    Example copy = e;
    benchmark::DoNotOptimize(copy);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExampleCopy);

void BM_SharedPtrCopy(benchmark::State& state) {
  auto p = std::make_shared<int>(1);
  for (auto _ : state) {
    std::shared_ptr<int> copy = p;
    benchmark::DoNotOptimize(copy);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SharedPtrCopy);

void BM_Shuffle(benchmark::State& state) {
  auto p = Cycle(Dataset(784)).Shuffle({.buffer_size = 10000});
  PullEach(state, p);
}
BENCHMARK(BM_Shuffle);

void BM_Batch(benchmark::State& state) {
  auto p = Cycle(Dataset(state.range(0))).Batch({.batch_size = 256});
  PullEach(state, p, 256);
  state.SetBytesProcessed(state.iterations() * 256 * state.range(0));
}
BENCHMARK(BM_Batch)->Arg(784);

void BM_BatchCastFP16(benchmark::State& state) {
  auto p = Cycle(Dataset(state.range(0)))
               .Batch({.batch_size = 256,
                       .cast = DType::kFloat16,
                       .scale = 1.0f / 255,
                       .mean = {0.286f},
                       .stddev = {0.353f}});
  PullEach(state, p, 256);
}
BENCHMARK(BM_BatchCastFP16)->Arg(784);

// 65,536-row batches of 784-byte uint8 rows cast to FP16 and normalized, in
// one fused buffer: rows/s (items), input bytes/s, and the heap allocations
// per batch once warm (counted over the timed batches, after two warm-up
// batches). Arg 1: the threads that convert the rows of a batch. Wall time
// (two threads: the CPU time of the main thread alone would flatter them).
void BM_BatchFP16(benchmark::State& state) {
  const int64_t rows = state.range(0);
  const int threads = state.range(1) > 0 ? static_cast<int>(state.range(1)) : 1;
  auto p = Cycle(Dataset(784))
               .Batch({.batch_size = rows,
                       .cast = DType::kFloat16,
                       .scale = 1.0f / 255,
                       .mean = {0.286f},
                       .stddev = {0.353f},
                       .threads = threads});
  // Warm: the buffer pool, and the 16 batches a batch echo can reference
  // (each of the first 16 allocates its rows' references once).
  for (int i = 0; i < 17; ++i) benchmark::DoNotOptimize(p.Next());
  g_allocations.store(0);
  g_count_allocations.store(true);
  for (auto _ : state) benchmark::DoNotOptimize(p.Next());
  g_count_allocations.store(false);
  state.SetItemsProcessed(state.iterations() * rows);
  state.SetBytesProcessed(state.iterations() * rows * 784);
  state.counters["allocs_per_batch"] =
      static_cast<double>(g_allocations.load()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_BatchFP16)
    ->Args({65536, 1})
    ->Args({65536, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The reference pipeline: echo 2, shuffle 10,000, batch 256, one thread.
void BM_EchoShuffleBatch(benchmark::State& state) {
  auto p = Cycle(Dataset(state.range(0)))
               .Echo({.factor = 2})
               .Shuffle({.buffer_size = 10000})
               .Batch({.batch_size = 256});
  PullEach(state, p, 256);
}
BENCHMARK(BM_EchoShuffleBatch)->Arg(784);

// Memcpy-gathers 256 (or arg 1) rows of arg 0 bytes, chosen at random among
// `count`, into one batch buffer; row i's bytes are at row_at(i). Bytes/s
// counts the rows' bytes.
template <typename RowAt>
void GatherRows(benchmark::State& state, size_t count, RowAt row_at) {
  const size_t row = static_cast<size_t>(state.range(0));
  const size_t rows = state.range(1) > 0 ? static_cast<size_t>(state.range(1)) : 256;
  std::vector<uint8_t> batch(rows * row);
  internal::Rng rng(1);
  for (auto _ : state) {
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(batch.data() + r * row, row_at(rng.Below(count)), row);
    }
    benchmark::DoNotOptimize(batch.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(rows));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(rows * row));
}

// The physical limit: a gather of random rows of the same dataset, each found
// through its Example (as any gather of Examples must).
void BM_GatherBaseline(benchmark::State& state) {
  const std::vector<Example>& d = Dataset(state.range(0));
  GatherRows(state, d.size(), [&](size_t i) { return d[i].components[0].buffer().data(); });
}
BENCHMARK(BM_GatherBaseline)->Arg(784);
BENCHMARK(BM_GatherBaseline)->Args({784, 65536})->Unit(benchmark::kMillisecond)->UseRealTime();

// The same gather from the rows' addresses, collected before the timing: the
// memory's limit whatever the layout of an Example (BM_GatherBaseline's
// figure includes reaching each row's bytes through its Example).
void BM_GatherRowsBaseline(benchmark::State& state) {
  const std::vector<Example>& d = Dataset(state.range(0));
  std::vector<const uint8_t*> rows_at;
  for (const Example& e : d) rows_at.push_back(e.components[0].buffer().data());
  GatherRows(state, rows_at.size(), [&](size_t i) { return rows_at[i]; });
}
BENCHMARK(BM_GatherRowsBaseline)->Arg(784);
BENCHMARK(BM_GatherRowsBaseline)->Args({784, 65536})->Unit(benchmark::kMillisecond)->UseRealTime();

// The ceiling for BM_BatchFP16's row threads on this machine: the same
// conversion (AffineRow, uint8 to normalized float16) of 65,536 rows of the
// same dataset, drawn at random (BM_BatchFP16 takes them in order), from
// their addresses, collected before the timing, into one buffer, split
// in arg-2 contiguous ranges converted by as many threads (the caller and
// threads kept across iterations, started and joined by a barrier). No
// Example is pulled and nothing is handed off: /2 ÷ /1 is what two threads
// can gain on this work from the memory and the cores alone.
void BM_ConvertRowsBaseline(benchmark::State& state) {
  const auto row = static_cast<size_t>(state.range(0));
  const auto rows = static_cast<size_t>(state.range(1));
  const auto threads = static_cast<size_t>(state.range(2));
  const std::vector<Example>& d = Dataset(state.range(0));
  std::vector<const uint8_t*> rows_at(rows);
  internal::Rng rng(1);
  for (const uint8_t*& at : rows_at) at = d[rng.Below(d.size())].components[0].buffer().data();
  std::vector<uint8_t> batch(rows * row * 2);
  const float scale = 1.0f / 255 / 0.353f, shift = -0.286f / 0.353f;
  auto convert = [&](size_t part) {
    const size_t end = rows * (part + 1) / threads;
    for (size_t r = rows * part / threads; r < end; ++r) {
      if (r + 8 < end) {
        for (size_t b = 0; b < row; b += 64) __builtin_prefetch(rows_at[r + 8] + b);
      }
      AffineRow(rows_at[r], DType::kUInt8, row, {&scale, 1}, {&shift, 1}, DType::kFloat16,
                batch.data() + r * row * 2);
    }
  };
  std::barrier sync(static_cast<std::ptrdiff_t>(threads));
  bool stop = false;  // written before a barrier phase the helpers then read
  std::vector<std::thread> helpers;
  for (size_t part = 1; part < threads; ++part) {
    helpers.emplace_back([&, part] {
      for (sync.arrive_and_wait(); !stop; sync.arrive_and_wait()) {
        convert(part);
        sync.arrive_and_wait();
      }
    });
  }
  for (auto _ : state) {
    if (threads > 1) sync.arrive_and_wait();
    convert(0);
    if (threads > 1) sync.arrive_and_wait();
    benchmark::DoNotOptimize(batch.data());
  }
  stop = true;
  if (threads > 1) sync.arrive_and_wait();
  for (std::thread& t : helpers) t.join();
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(rows));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(rows * row));
}
BENCHMARK(BM_ConvertRowsBaseline)
    ->Args({784, 65536, 1})
    ->Args({784, 65536, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One lock and unlock of the run-ahead core's lock (internal/mutex.h) and of
// an absl::Mutex, by one thread and by two at once on the same mutex: the
// system Abseil runs its deadlock detector on every acquisition
// (docs/benchmarks.md, "The hand-off's lock").
template <typename M>
void BM_LockUnlock(benchmark::State& state) {
  static M mu;
  for (auto _ : state) {
    mu.Lock();
    benchmark::ClobberMemory();
    mu.Unlock();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_TEMPLATE(BM_LockUnlock, absl::Mutex)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_TEMPLATE(BM_LockUnlock, internal::Mutex)->Threads(1)->Threads(2)->UseRealTime();

// Cost of moving one element across the Prefetch thread boundary. The
// thread-crossing benchmarks report wall time (UseRealTime): the CPU time of
// the consumer thread alone hides the other thread's share and the wake-ups.
void BM_PrefetchHandoff(benchmark::State& state) {
  auto p = FromRange(0, INT64_MAX).Prefetch({.depth = static_cast<int>(state.range(0))});
  PullEach(state, p);
}
BENCHMARK(BM_PrefetchHandoff)->Arg(64)->UseRealTime();

// Cost of moving one element to a Map worker and its result back (fn = x + 1).
void BM_MapParallel(benchmark::State& state) {
  auto p =
      FromRange(0, INT64_MAX)
          .Map([](int64_t x) { return x + 1; }, {.parallelism = static_cast<int>(state.range(0))});
  if (!p.status().ok()) state.SkipWithError(p.status().ToString().c_str());
  PullEach(state, p);
}
BENCHMARK(BM_MapParallel)->Arg(1)->Arg(2)->UseRealTime();

// The same with no results ahead of the calls in flight (buffer = 0, the old
// default): every hand-off is one element, and producer and consumer take
// turns sleeping.
void BM_MapParallelNoRunAhead(benchmark::State& state) {
  auto p = FromRange(0, INT64_MAX)
               .Map([](int64_t x) { return x + 1; },
                    {.parallelism = static_cast<int>(state.range(0)), .buffer = 0});
  if (!p.status().ok()) state.SkipWithError(p.status().ToString().c_str());
  PullEach(state, p);
}
BENCHMARK(BM_MapParallelNoRunAhead)->Arg(1)->UseRealTime();

// A chain of dependent multiply-adds: `iterations` of them take a fixed amount
// of one core's time, whatever else runs.
uint64_t Spin(uint64_t x, int64_t iterations) {
  for (int64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

// Iterations of Spin() per 2 microseconds of one core, calibrated once: the
// fastest of several trials, so that a busy machine does not inflate it.
int64_t SpinIterationsPer2us() {
  static const int64_t iterations = [] {
    constexpr int64_t kTrial = 1'000'000;
    int64_t best_ns = INT64_MAX;
    for (int t = 0; t < 7; ++t) {
      const auto t0 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(Spin(static_cast<uint64_t>(t), kTrial));
      const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
      best_ns = std::min(best_ns, ns);
    }
    return std::max<int64_t>(1, kTrial * 2000 / std::max<int64_t>(best_ns, 1));
  }();
  return iterations;
}

// A Map whose function works 2 us per element (one core's time), the
// consumer taking the results: what parallelism N buys over inline (N = 0).
// N = -1 is kAutotune.
void BM_MapParallelWork(benchmark::State& state) {
  const int64_t iterations = SpinIterationsPer2us();
  const int parallelism = state.range(0) == -1 ? kAutotune : static_cast<int>(state.range(0));
  auto p = FromRange(0, INT64_MAX)
               .Map([iterations](int64_t x) { return static_cast<int64_t>(Spin(x, iterations)); },
                    {.parallelism = parallelism});
  if (!p.status().ok()) state.SkipWithError(p.status().ToString().c_str());
  PullEach(state, p);
}
BENCHMARK(BM_MapParallelWork)->Arg(0)->Arg(1)->Arg(2)->Arg(-1)->UseRealTime();

// BM_Echo in a process that has started a thread, as every one with a
// Prefetch or a parallel Map has: reference counts take atomic steps from
// then on (registered last, as it turns them on for the rest of the run).
void BM_EchoAfterAThread(benchmark::State& state) {
  std::thread([] {}).join();
  auto p = Cycle(Dataset(784)).Echo({.factor = 4});
  PullEach(state, p);
}
BENCHMARK(BM_EchoAfterAThread);

}  // namespace
}  // namespace dataecho
