// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Formats: CRC-32C, TFRecord reading from local files (with both CRC checks)
// and JPEG decoding. The figures in docs/benchmarks.md come from
//
//   build/benchmarks/formats_benchmark --benchmark_repetitions=3
//   --benchmark_report_aggregates_only=true
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "dataecho/crc32c.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

void BM_Crc32c(benchmark::State& state, uint32_t (*crc)(uint32_t, const void*, size_t)) {
  const std::string data = RandomBytes(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) benchmark::DoNotOptimize(crc(0, data.data(), data.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK_CAPTURE(BM_Crc32c, portable, &internal::Crc32cExtendPortable)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_Crc32c, dispatch, &Crc32cExtend)->Arg(1 << 20);

// A 256 MiB TFRecord file of `record_bytes` records, written once per size.
class TFRecordFile {
 public:
  explicit TFRecordFile(size_t record_bytes) {
    path_ = fmt::format("{}/dataecho-bench-{}-{}.tfrecord", P_tmpdir, getpid(), record_bytes);
    auto w = TFRecordWriter::Create(path_);
    const std::string payload = RandomBytes(record_bytes, 2);
    for (size_t written = 0; written < (size_t{256} << 20); written += record_bytes) {
      if (!(*w)->Write(payload).ok()) std::abort();
    }
    if (!(*w)->Close().ok()) std::abort();
  }
  ~TFRecordFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void BM_TFRecordReadLocal(benchmark::State& state) {
  static std::map<int64_t, std::unique_ptr<TFRecordFile>> files;
  auto& file = files[state.range(0)];
  if (!file) file = std::make_unique<TFRecordFile>(static_cast<size_t>(state.range(0)));
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  int64_t bytes = 0, records = 0;
  for (auto _ : state) {
    auto source = MakeTFRecordSource(store, {file->path()});
    while (true) {
      auto next = source->Next();
      if (!next.ok()) {
        state.SkipWithError("read failed");
        return;
      }
      if (!next->has_value()) break;
      bytes += static_cast<int64_t>((*next)->data.size());
      ++records;
    }
  }
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(records);
}
BENCHMARK(BM_TFRecordReadLocal)
    ->Arg(1 << 10)
    ->Arg(100 << 10)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A smooth test image (JPEG-friendly, like a photo or a Fashion-MNIST item).
Tensor TestImage(int64_t h, int64_t w, int64_t c) {
  MutableBuffer mb(static_cast<size_t>(h * w * c));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k)
        mb.data()[(y * w + x) * c + k] =
            static_cast<uint8_t>((x * 255 / w + y * 128 / h + k * 60) % 256);
  return *Tensor::Make(DType::kUInt8, {h, w, c}, std::move(mb).Freeze());
}

void BM_JpegDecode(benchmark::State& state) {
  const int64_t side = state.range(0), channels = state.range(1);
  const std::string jpeg = *EncodeJpeg(TestImage(side, side, channels), {.quality = 90});
  for (auto _ : state) {
    auto image = DecodeJpeg(jpeg);
    if (!image.ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(image);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["jpeg_bytes"] = static_cast<double>(jpeg.size());
}
BENCHMARK(BM_JpegDecode)->Args({28, 1})->Args({224, 3});

void BM_DecodeImageRecordRaw(benchmark::State& state) {
  Record r;
  r.data = Buffer::CopyOf(*EncodeImageRecord(TestImage(28, 28, 1), 3));
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImageRecord(r));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DecodeImageRecordRaw);

}  // namespace
}  // namespace dataecho
