// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Batch echoing: repeat whole batches after the Batch stage.
//
// When even shuffling and batching are too slow for the accelerator (or the
// batch is already on its way to it), echo after Batch: every fused batch is
// handed to the trainer e times, and none of its bytes are copied again (the
// copies share the batch's buffers). Each repeat reports fresh_rows = 0, so a
// trainer can tell repeated steps from fresh ones.
#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>

#include "dataecho/dataecho.h"

// A slow upstream: 2,048 labelled 8x8 images at 0.1 ms each.
absl::StatusOr<std::optional<dataecho::Example>> ReadImage() {
  static uint64_t next = 0;
  if (next == 2048) return std::nullopt;
  std::this_thread::sleep_for(std::chrono::microseconds(100));
  dataecho::MutableBuffer pixels(8 * 8);
  for (size_t i = 0; i < pixels.size(); ++i) pixels.data()[i] = static_cast<uint8_t>(next + i);
  dataecho::Example e;
  e.components.push_back(
      *dataecho::Tensor::Make(dataecho::DType::kUInt8, {8, 8, 1}, std::move(pixels).Freeze()));
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
      dataecho::FromGenerator<dataecho::Example>(ReadImage)
          .Shuffle({.buffer_size = 512, .seed = 1})
          .Batch({.batch_size = 64, .cast = dataecho::DType::kFloat32, .scale = 1.0f / 255})
          .Prefetch({.depth = 4})            // batches are made ahead, on their own thread
          .Echo({.factor = 3.0, .seed = 2})  // batch echoing: each batch three times
          .Prefetch({.depth = 2});
  if (!pipeline.status().ok()) {
    std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  int64_t steps = 0, fresh_steps = 0;
  while (true) {
    absl::StatusOr<std::optional<dataecho::Batch>> batch = pipeline.Next();
    if (!batch.ok()) {
      std::fprintf(stderr, "%s\n", batch.status().ToString().c_str());
      return 1;
    }
    if (!batch->has_value()) break;
    ++steps;  // a trainer would run one step on **batch here
    if ((*batch)->fresh_rows > 0) ++fresh_steps;
  }
  std::printf("%lld steps, %lld on fresh batches\n\n%s", static_cast<long long>(steps),
              static_cast<long long>(fresh_steps),
              dataecho::FormatStatsTable(pipeline.Stats()).c_str());
  return steps == 3 * fresh_steps ? 0 : 1;
}
