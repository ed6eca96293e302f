// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "run.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "dataecho/augment.h"
#include "dataecho/echo_placement.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/pipeline.h"
#include "dataecho/status_macros.h"
#include "dataecho/storage/glob.h"
#include "fmt/format.h"
#include "imagenet.h"
#include "testing/cpus.h"
#include "testing/http_server.h"

namespace dataecho::bench {
namespace {

constexpr int kDefaultShards = 4;
constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist/";

std::string DefaultDataDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != 0) {
    return std::string(xdg) + "/dataecho/fashion-mnist-tfrecord";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != 0) {
    return std::string(home) + "/.cache/dataecho/fashion-mnist-tfrecord";
  }
  return "/tmp/dataecho-fashion-mnist-tfrecord";
}

// Fashion-MNIST's training set as raw image records in TFRecord shards
// (written once, then reused: a "DONE" marker closes a complete set).
absl::StatusOr<std::vector<std::string>> PrepareDefaultShards(const std::string& dir) {
  std::vector<std::string> names;
  for (int i = 0; i < kDefaultShards; ++i)
    names.push_back(fmt::format("train-{:05d}-of-{:05d}.tfrecord", i, kDefaultShards));
  if (!std::filesystem::exists(dir + "/DONE")) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return absl::InternalError(fmt::format("cannot create {}: {}", dir, ec.message()));
    std::shared_ptr<ObjectStore> store = OpenObjectStore();
    StagePtr<Example> idx =
        MakeIdxSource(store, std::string(kFashionMnist) + "train-images-idx3-ubyte.gz",
                      std::string(kFashionMnist) + "train-labels-idx1-ubyte.gz");
    std::vector<std::unique_ptr<TFRecordWriter>> writers;
    for (const std::string& n : names) {
      absl::StatusOr<std::unique_ptr<TFRecordWriter>> w = TFRecordWriter::Create(dir + "/" + n);
      if (!w.ok()) return w.status();
      writers.push_back(*std::move(w));
    }
    for (int64_t row = 0;; ++row) {
      absl::StatusOr<std::optional<Example>> e = idx->Next();
      if (!e.ok()) return e.status();
      if (!e->has_value()) break;
      absl::StatusOr<std::string> payload = EncodeImageRecord((*e)->components[0], (*e)->label);
      if (!payload.ok()) return payload.status();
      if (absl::Status s = writers[static_cast<size_t>(row % kDefaultShards)]->Write(*payload);
          !s.ok())
        return s;
    }
    for (auto& w : writers) {
      if (absl::Status s = w->Close(); !s.ok()) return s;
    }
    std::ofstream(dir + "/DONE") << "complete\n";
  }
  return names;
}

// Emulated steps run after the first batch and before the measured ones.
constexpr int kWarmupSteps = 50;

// The monotonic clock (CLOCK_MONOTONIC) in nanoseconds.
int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void BusyWaitUntil(int64_t deadline_ns) {
  while (NowNanos() < deadline_ns) {
  }
}

// The CPU kept for the emulated trainer (-1: none), see ReserveTrainerCpu().
int trainer_cpu = -1;
cpu_set_t pipeline_cpus;

// Runs the calling thread on the trainer's CPU while in scope.
class OnTrainerCpu {
 public:
  OnTrainerCpu() {
    if (trainer_cpu < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(trainer_cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);
  }
  ~OnTrainerCpu() {
    if (trainer_cpu >= 0) sched_setaffinity(0, sizeof(pipeline_cpus), &pipeline_cpus);
  }
};

// Random crop (2-pixel padding) and horizontal flip, seeded per (seed, source index, repeat index).
std::function<absl::StatusOr<Example>(Example)> Augmenter(uint64_t seed) {
  return Compose(RandomCrop({.height = 28, .width = 28, .padding = 2, .seed = seed}),
                 RandomFlip({.seed = seed + 1}));
}

// Read -> decode -> throttle to R -> prefetch. `bytes` counts record bytes read;
// `decode` (optional) is the decode Map's parallelism control (--insert=auto
// may raise its workers).
Pipeline<Example> Upstream(const BenchConfig& config, const Source& source,
                           std::shared_ptr<std::atomic<int64_t>> bytes,
                           std::shared_ptr<MapParallelism> decode = nullptr) {
  Pipeline<Example> decoded = [&]() -> Pipeline<Example> {
    if (source.format == "idx") {
      auto store = source.store;
      auto uris = source.uris;
      return From(RepeatSource<Example>(
                      [store, uris] { return MakeIdxSource(store, uris[0], uris[1]); }, -1))
          .Map(
              [bytes](Example e) {
                bytes->fetch_add(static_cast<int64_t>(e.ByteSize()) + 1, std::memory_order_relaxed);
                return e;
              },
              {.parallelism = 0});
    }
    auto store = source.store;
    auto uris = source.uris;
    const int cycle = static_cast<int>(std::min<size_t>(4, uris.size()));
    return From(RepeatSource<Record>(
                    [store, uris, cycle] {
                      return MakeTFRecordSource(store, uris, {}, {.cycle_length = cycle});
                    },
                    -1))
        .Map(
            [bytes](Record r) {
              bytes->fetch_add(
                  static_cast<int64_t>(r.data.size() + kTFRecordHeaderBytes + kTFRecordFooterBytes),
                  std::memory_order_relaxed);
              return DecodeImageRecord(r);  // a slice of the record: cheaper than a thread hand-off
            },
            // JPEGs: decoded in parallel on the CPUs left to the pipeline (this
            // thread's, after ReserveTrainerCpu()).
            {.parallelism = source.dataset != "imagenet"  ? 0
                            : config.pipeline_threads > 0 ? config.pipeline_threads
                                                          : testing::UsableCpus(),
             .name = "decode",
             .parallelism_control = std::move(decode)});
  }();
  if (config.upstream_ratio > 0) {
    // R is calibrated per example: a batch of B examples costs R steps.
    const absl::Duration per_example = absl::Microseconds(
        config.upstream_ratio * config.step_ms * 1000.0 / static_cast<double>(config.batch_size));
    // Sleep-only pacing; the schedule makes up for late wake-ups of up to one
    // batch's upstream time, so the long-run rate holds on a busy machine.
    // Examples are released in bursts of about 1 ms of upstream time (like
    // records arriving in ranged reads): one sleep and one consumer wake-up
    // per burst instead of per example, which on a 2-core VM cost more CPU
    // than the pipeline itself.
    decoded = std::move(decoded).Throttle(
        {.latency = per_example,
         .spin = absl::ZeroDuration(),
         .catch_up = per_example * static_cast<double>(8 * config.batch_size),
         .min_sleep = absl::Milliseconds(1),
         .name = "upstream_throttle"});
  }
  return std::move(decoded).Prefetch(
      {.depth = static_cast<int>(std::max<int64_t>(64, config.batch_size)),
       .name = "upstream_prefetch"});
}

BatchOptions TrainerBatch(const BenchConfig& config) {
  return {.batch_size = config.batch_size,
          .drop_remainder = true,
          .cast = DType::kFloat32,
          .scale = 1.0f / 255,
          .mean = {0.286f},
          .stddev = {0.353f}};
}

// FAILED_PRECONDITION unless `source` yields a record: every run needs at
// least one batch, and a pipeline over nothing has nothing to measure.
absl::Status CheckHasRecords(const BenchConfig& config, const Source& source) {
  absl::StatusOr<bool> any = [&]() -> absl::StatusOr<bool> {
    if (source.format == "idx") {
      StagePtr<Example> s = MakeIdxSource(source.store, source.uris[0], source.uris[1]);
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Example> e, s->Next());
      return e.has_value();
    }
    StagePtr<Record> s = MakeTFRecordSource(source.store, source.uris);
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> r, s->Next());
    return r.has_value();
  }();
  if (!any.ok()) return any.status();
  if (*any) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format(
      "no records in {} ({} object(s)): nothing to batch",
      config.source.empty() ? std::string("the built-in dataset") : RedactUri(config.source),
      source.uris.size()));
}

}  // namespace

bool ReserveTrainerCpu() {
  cpu_set_t all;
  if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2) return false;
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  pipeline_cpus = all;
  CPU_CLR(first, &pipeline_cpus);
  if (sched_setaffinity(0, sizeof(pipeline_cpus), &pipeline_cpus) != 0) return false;
  trainer_cpu = first;
  return true;
}

absl::StatusOr<Source> OpenSource(const BenchConfig& config) {
  Source s;
  s.format = config.format;
  s.store = OpenObjectStore();
  s.dataset = config.dataset;
  if (config.source.empty()) {
    std::string dir = config.data_dir.empty() ? DefaultDataDir() : config.data_dir;
    absl::StatusOr<std::vector<std::string>> names;
    if (config.dataset == "imagenet") {
      absl::StatusOr<ImagenetShards> shards = PrepareImagenetShards(config);
      if (!shards.ok()) return shards.status();
      dir = shards->dir;
      names = shards->names;
    } else {
      names = PrepareDefaultShards(dir);
    }
    if (!names.ok()) return names.status();
    absl::StatusOr<std::unique_ptr<testing::HttpServer>> server = testing::HttpServer::Start(
        {.directory = dir, .latency = absl::Milliseconds(config.latency_ms)});
    if (!server.ok()) return server.status();
    for (const std::string& n : *names) s.uris.push_back((*server)->url() + "/" + n);
    s.keep_alive = std::shared_ptr<testing::HttpServer>(std::move(*server));
    s.format = "tfrecord";
  } else if (config.format == "idx") {
    const size_t comma = config.source.find(',');
    s.uris = {config.source.substr(0, comma), config.source.substr(comma + 1)};
  } else {
    absl::StatusOr<std::vector<std::string>> uris = ExpandUris(*s.store, config.source);
    if (!uris.ok()) return uris.status();
    if (uris->empty())
      return absl::NotFoundError(
          fmt::format("--source={} matches no object", RedactUri(config.source)));
    s.uris = *std::move(uris);
  }
  absl::StatusOr<ObjectInfo> info = s.store->Stat(s.uris[0]);
  if (!info.ok()) return info.status();
  DATAECHO_RETURN_IF_ERROR(CheckHasRecords(config, s));
  return s;
}

absl::StatusOr<RunResult> RunOnce(const BenchConfig& config, const Source& source, double echo,
                                  const std::function<void(int64_t)>& progress) {
  auto bytes = std::make_shared<std::atomic<int64_t>>(0);
  auto decode = std::make_shared<MapParallelism>();
  Pipeline<Example> upstream = Upstream(config, source, bytes, decode);
  const uint64_t seed = config.seed;
  // The placement as --insert says; for adaptive, `echo` is the cap m (1 = no
  // echoing), and repeats are made only while fewer than two batches are
  // queued for the trainer (the demand gate), not whenever the queue has room.
  const bool imagenet = source.dataset == "imagenet";
  Pipeline<Batch> p = EchoedBatches(
      std::move(upstream), imagenet ? ImagenetAugmenter(seed) : Augmenter(seed),
      {.placement = config.insert,
       .echo = {.factor = echo, .seed = seed + 7},
       .adaptive = {.max_factor = echo, .pool_size = 2 * config.batch_size, .seed = seed + 7},
       .gate_below = 2,
       .augment = {.parallelism = imagenet ? config.pipeline_threads : 0},
       .shuffle = {.buffer_size = config.shuffle_buffer, .seed = seed + 3},
       .batch = imagenet ? ImagenetBatch(config) : TrainerBatch(config),
       .prefetch = {.depth = 4, .name = "trainer_prefetch"},
       // auto: the cores left to the pipeline are the ones this thread may
       // use (ReserveTrainerCpu kept the trainer's); a plan every 12 batches,
       // the first after 36 (one window to start, one of warm-up, one
       // measured), before the kWarmupSteps end.
       .auto_placement = {.max_factor = echo,
                          .prefer = config.prefer,
                          .pipeline_cores = trainer_cpu >= 0 ? testing::UsableCpus() : 0,
                          .decide_every = 12,
                          .seed = seed + 7},
       .decode_parallelism = decode});
  if (!p.status().ok()) return p.status();

  // Warm-up, not measured: the first batch fills the shuffle buffer, then
  // kWarmupSteps steps bring the queues to their steady level (without them,
  // items queued while the first batch was built would count as a burst of
  // upstream speed in the first measured steps).
  const int64_t step_ns = static_cast<int64_t>(config.step_ms * 1e6);
  int64_t idle_ns = 0, fresh = 0, rows = 0;
  auto step = [&]() -> absl::Status {
    const int64_t ask = NowNanos();
    absl::StatusOr<std::optional<Batch>> b = p.Next();
    const int64_t got = NowNanos();
    idle_ns += got - ask;
    if (!b.ok()) return b.status();
    if (!b->has_value()) return absl::OutOfRangeError("the source ended before the last step");
    fresh += (*b)->fresh_rows;
    rows += (*b)->num_rows;
    BusyWaitUntil(got + step_ns);  // the emulated training step (precise: see docs)
    return absl::OkStatus();
  };
  if (auto first = p.Next(); !first.ok() || !first->has_value()) {
    return first.ok() ? absl::OutOfRangeError("the source ended during warm-up") : first.status();
  }
  OnTrainerCpu pinned;  // after the first Next(): the pipeline's threads have started elsewhere
  for (int i = 0; i < kWarmupSteps; ++i) {
    if (absl::Status s = step(); !s.ok()) return s;
  }
  idle_ns = fresh = rows = 0;
  const int64_t bytes0 = bytes->load();
  const int64_t t0 = NowNanos();
  for (int64_t n = 1; n <= config.steps; ++n) {
    if (absl::Status s = step(); !s.ok()) return s;
    if (progress) progress(n);
  }
  const int64_t elapsed = NowNanos() - t0;
  RunResult r;
  r.echo = echo;
  r.insert = std::string(InsertName(config.insert));
  r.steps = config.steps;
  r.seconds = static_cast<double>(elapsed) * 1e-9;
  r.steps_per_sec = static_cast<double>(config.steps) / r.seconds;
  r.fresh_examples = fresh;
  r.repeated_examples = rows - fresh;
  r.realized_echo_factor = fresh > 0 ? static_cast<double>(rows) / static_cast<double>(fresh) : 0;
  r.upstream_bytes = bytes->load() - bytes0;
  r.consumer_idle_fraction = static_cast<double>(idle_ns) / static_cast<double>(elapsed);
  r.trainer_lost_fraction =
      static_cast<double>(std::max<int64_t>(0, elapsed - idle_ns - config.steps * step_ns)) /
      static_cast<double>(elapsed);
  r.ideal_speedup = config.upstream_ratio > 0 ? std::min(echo, config.upstream_ratio) : 1.0;
  r.stage_stats = FormatStatsTable(p.Stats());
  for (const StageStats& s : p.Stats()) {
    if (s.name == "adaptive_echo") r.rate_ratio_estimate = s.Extra("rate_ratio");
    if (s.name == "echo_planner") {
      r.decisions = s.notes;
      r.auto_insert = std::string(
          EchoPlacementName(static_cast<EchoPlacement>(static_cast<int>(s.Extra("placement")))));
      r.auto_echo = s.Extra("factor");
    }
  }
  return r;
}

absl::StatusOr<double> MeasureUpstreamRatio(const BenchConfig& config, const Source& source) {
  auto bytes = std::make_shared<std::atomic<int64_t>>(0);
  Pipeline<Example> p = Upstream(config, source, bytes);
  const int64_t warmup = config.batch_size, measured = 20 * config.batch_size;
  int64_t t0 = 0;
  for (int64_t i = 0; i < warmup + measured; ++i) {
    if (i == warmup) t0 = NowNanos();
    absl::StatusOr<std::optional<Example>> e = p.Next();
    if (!e.ok()) return e.status();
    if (!e->has_value())
      return absl::OutOfRangeError("the source ended while measuring the upstream");
  }
  const double per_batch_ms = static_cast<double>(NowNanos() - t0) * 1e-6 / 20.0;
  return per_batch_ms / config.step_ms;
}

}  // namespace dataecho::bench
