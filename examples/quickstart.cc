// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Quick start: wrap a slow reader with an echo stage.
//
// `SlowReader` stands for any upstream that is slower than a training step
// (a remote object store, JPEG decoding, ...). Five lines of pipeline put it
// behind a prefetch boundary, echo every item twice, spread the copies with a
// shuffle buffer and batch them, then print what each stage did.
#include <cstdio>
#include <string_view>
#include <thread>

#include "dataecho/dataecho.h"

// Your reader: here, 4,000 small "images" at 0.2 ms each.
absl::StatusOr<std::optional<dataecho::Example>> SlowReader() {
  static uint64_t next = 0;
  if (next == 4000) return std::nullopt;  // end of the data
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  dataecho::MutableBuffer pixels(28 * 28);
  std::fill(pixels.data(), pixels.data() + pixels.size(), static_cast<uint8_t>(next));
  dataecho::Example e;
  e.components.push_back(
      *dataecho::Tensor::Make(dataecho::DType::kUInt8, {28, 28, 1}, std::move(pixels).Freeze()));
  e.label = static_cast<int64_t>(next % 10);
  e.source_index = next++;
  return e;
}

int main(int argc, char** argv) {
  if (argc > 1) {  // it takes no flags: an argument is a mistake, not something to ignore
    const bool help = std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h";
    std::fprintf(help ? stdout : stderr, "usage: %s (no flags or arguments)\n", argv[0]);
    return help && argc == 2 ? 0 : 2;
  }
  auto pipeline =
      dataecho::FromGenerator<dataecho::Example>(SlowReader)
          .Prefetch({.depth = 256})                   // the reader runs ahead on its own thread
          .Echo({.factor = 2.0, .seed = 1})           // every item twice
          .Shuffle({.buffer_size = 1000, .seed = 2})  // copies land in different batches
          .Batch({.batch_size = 64, .cast = dataecho::DType::kFloat16, .scale = 1.0f / 255});
  if (!pipeline.status().ok()) {
    std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  int64_t batches = 0, rows = 0, fresh = 0;
  while (true) {
    absl::StatusOr<std::optional<dataecho::Batch>> batch = pipeline.Next();
    if (!batch.ok()) {
      std::fprintf(stderr, "%s\n", batch.status().ToString().c_str());
      return 1;
    }
    if (!batch->has_value()) break;
    ++batches;
    rows += (*batch)->num_rows;
    fresh += (*batch)->fresh_rows;
  }
  std::printf("%lld batches, %lld rows, %lld fresh (realized echo factor %.2f)\n\n%s",
              static_cast<long long>(batches), static_cast<long long>(rows),
              static_cast<long long>(fresh), static_cast<double>(rows) / fresh,
              dataecho::FormatStatsTable(pipeline.Stats()).c_str());
  return 0;
}
