// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// What elastic sharding costs (storage/epoch_plan.h, formats/tfrecord_index.h):
//
//   BM_PlanEpoch/W/F            the plan of W ranks over F files of uneven sizes
//                               (metadata only), fresh and after two restarts
//   BM_TFRecordIndex/R/S/M      the record offsets of a 32 MiB TFRecord file of
//                               R-byte records, from store S (0 local, 1 loopback
//                               HTTP), by M: 0 reading the file once (kStream),
//                               1 one ranged read per header (kHeaders), 2 reading
//                               its index file (DALI's format)
//   BM_TFRecordRange/I          records [n/2, n/2 + n/8) of that file (110 KiB
//                               records) over loopback HTTP with 5 ms per request:
//                               I = 1 one ranged read through the index, I = 0
//                               read from the start and drop the records before
//   BM_DecodePhotoLike          decoding a 500x375 RGB JPEG of ImageNet's average
//                               size (a gradient with noise, quality 90): the
//                               decode rate per core of docs/scale.md
//
//   build/benchmarks/sharding_benchmark --benchmark_counters_tabular=true
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/internal/random.h"
#include "dataecho/storage/epoch_plan.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

constexpr size_t kFileBytes = size_t{32} << 20;

std::vector<uint64_t> UnevenCounts(size_t n) {
  internal::Rng rng(1);
  std::vector<uint64_t> counts(n);
  for (uint64_t& c : counts) c = 625 + rng.Below(1251);  // ImageNet-like: ~1,250 per shard
  return counts;
}

void BM_PlanEpoch(benchmark::State& state) {
  const int world = static_cast<int>(state.range(0));
  const std::vector<uint64_t> counts = UnevenCounts(static_cast<size_t>(state.range(1)));
  EpochProgress progress{.epoch = 3, .runs = {}};
  if (state.range(2) != 0) {  // stopped at a third and at two thirds of the epoch
    uint64_t total = 0;
    for (uint64_t c : counts) total += c;
    progress.runs.push_back({.world_size = world / 2, .position = total / 3, .consumed = {}});
    progress.runs.push_back({.world_size = world, .position = 2 * total / 3, .consumed = {}});
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<RecordRange>> mine =
        PlanRank(counts, {.seed = 1, .mode = ShardMode::kRecords, .shuffle_files = true}, progress,
                 world - 1, world);
    if (!mine.ok()) state.SkipWithError("plan failed");
    benchmark::DoNotOptimize(mine);
  }
}
BENCHMARK(BM_PlanEpoch)
    ->Args({1024, 1024, 0})
    ->Args({1024, 2048, 0})
    ->Args({1024, 2048, 1})
    ->Unit(benchmark::kMillisecond);

// A TFRecord file of `record_bytes` records and its index file, in a
// directory served over loopback HTTP; written once per size.
struct TestFile {
  std::string dir;
  std::string name;
  TFRecordIndex index;
  std::unique_ptr<testing::HttpServer> plain;  // no added latency
  std::unique_ptr<testing::HttpServer> slow;   // 5 ms per request

  std::string Uri(int store, const std::string& file) const {
    if (store == 0) return dir + "/" + file;
    return (store == 1 ? plain : slow)->url() + "/" + file;
  }
};

const TestFile& File(size_t record_bytes) {
  static auto* files = new std::map<size_t, TestFile>();
  TestFile& f = (*files)[record_bytes];
  if (f.name.empty()) {
    f.dir = fmt::format("{}/dataecho-shard-bench-{}", P_tmpdir, getpid());
    (void)std::system(fmt::format("mkdir -p '{}'", f.dir).c_str());
    f.name = fmt::format("r{}.tfrecord", record_bytes);
    auto w = TFRecordWriter::Create(f.dir + "/" + f.name);
    const std::string payload(record_bytes, 'x');
    uint64_t offset = 0;
    for (size_t written = 0; written < kFileBytes; written += record_bytes) {
      f.index.offsets.push_back(offset);
      offset += record_bytes + kTFRecordHeaderBytes + kTFRecordFooterBytes;
      if (!(*w)->Write(payload).ok()) std::abort();
    }
    f.index.offsets.push_back(offset);
    if (!(*w)->Close().ok()) std::abort();
    FILE* out = std::fopen((f.dir + "/" + f.name + ".idx").c_str(), "w");
    const std::string text = FormatTFRecordIndex(f.index);
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
    f.plain = *testing::HttpServer::Start({.directory = f.dir});
    f.slow = *testing::HttpServer::Start({.directory = f.dir, .latency = absl::Milliseconds(5)});
  }
  return f;
}

void BM_TFRecordIndex(benchmark::State& state) {
  const TestFile& f = File(static_cast<size_t>(state.range(0)));
  const int store_kind = static_cast<int>(state.range(1));
  const int mode = static_cast<int>(state.range(2));
  std::unique_ptr<ObjectStore> store = OpenObjectStore();
  for (auto _ : state) {
    absl::StatusOr<TFRecordIndex> index =
        mode == 2 ? ReadTFRecordIndex(*store, f.Uri(store_kind, f.name + ".idx"))
                  : ScanTFRecordIndex(*store, f.Uri(store_kind, f.name),
                                      mode == 0 ? TFRecordScan::kStream : TFRecordScan::kHeaders);
    if (!index.ok() || index->records() != f.index.records()) {
      state.SkipWithError("index failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(f.index.records()));
  state.counters["records"] = static_cast<double>(f.index.records());
}
BENCHMARK(BM_TFRecordIndex)
    ->ArgsProduct({{832, 110 << 10}, {0, 1}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_TFRecordRange(benchmark::State& state) {
  const TestFile& f = File(110 << 10);
  const bool with_index = state.range(0) != 0;
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  const uint64_t n = f.index.records();
  const RecordRange range{.file = 0, .begin = n / 2, .end = n / 2 + n / 8};
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<RecordFileReader>> reader =
        OpenTFRecordRange(store, f.Uri(2, f.name), range, with_index ? &f.index : nullptr);
    uint64_t records = 0;
    while (reader.ok()) {
      absl::StatusOr<std::optional<Record>> r = (*reader)->Next();
      if (!r.ok() || !r->has_value()) break;
      ++records;
    }
    if (records != range.size()) state.SkipWithError("range read failed");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(range.size()));
  state.counters["bytes_fetched"] = static_cast<double>(
      f.index.offsets[range.end] - (with_index ? f.index.offsets[range.begin] : 0));
}
BENCHMARK(BM_TFRecordRange)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DecodePhotoLike(benchmark::State& state) {
  constexpr int64_t kHeight = 375, kWidth = 500;
  MutableBuffer pixels(static_cast<size_t>(kHeight * kWidth * 3));
  internal::Rng rng(7);
  for (int64_t i = 0; i < kHeight * kWidth * 3; ++i) {
    const int64_t y = i / (kWidth * 3), x = (i / 3) % kWidth;
    const int64_t v = (x * 200 / kWidth + y * 55 / kHeight) + static_cast<int64_t>(rng.Below(48));
    pixels.data()[i] = static_cast<uint8_t>(std::min<int64_t>(v, 255));
  }
  absl::StatusOr<Tensor> image =
      Tensor::Make(DType::kUInt8, {kHeight, kWidth, 3}, std::move(pixels).Freeze());
  absl::StatusOr<std::string> jpeg = EncodeJpeg(*image, {.quality = 90});
  if (!jpeg.ok()) {
    state.SkipWithError("encode failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(DecodeJpeg(*jpeg));
  state.SetItemsProcessed(state.iterations());
  state.counters["jpeg_bytes"] = static_cast<double>(jpeg->size());
}
BENCHMARK(BM_DecodePhotoLike);

}  // namespace
}  // namespace dataecho
