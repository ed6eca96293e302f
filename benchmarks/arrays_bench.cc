// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// arrays_bench: the in-memory pipeline of benchmarks/python/vs_dataloader.py,
// built and drained from C++, so the script can report what the Python
// binding costs (Python items/s ÷ C++ items/s, "python_vs_cpp").
//
// The same data and steps as the script's dataecho contender: Fashion-MNIST's
// 60,000 training images copied into one buffer (rows are slices of it, as
// from_arrays() makes them), Echo(2, seed 1) -> Shuffle(10,000, seed 2) ->
// Batch(256, float32, x / 255 standardized); one epoch per round, each batch
// touched as a consumer would (its last label read).
//
//   arrays_bench --rounds=1     # prints {"items_per_second": [...], ...} as JSON
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench_main.h"
#include "dataecho/formats/idx.h"
#include "dataecho/internal/counter.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/local_store.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

ABSL_FLAG(std::string, data_dir, "/usr/share/datasets/fashion-mnist",
          "directory of train-images-idx3-ubyte.gz and train-labels-idx1-ubyte.gz");
ABSL_FLAG(int, rounds, 1, "epochs measured, one figure each");
ABSL_FLAG(double, echo, 2, "echo factor");
ABSL_FLAG(int64_t, shuffle, 10000, "shuffle buffer");
ABSL_FLAG(int64_t, batch_size, 256, "rows per batch");

namespace dataecho {
namespace {

// Every training image and label, the rows slices of one buffer.
absl::StatusOr<std::vector<Example>> LoadRows(const std::string& dir) {
  Pipeline<Example> idx(MakeIdxSource(NewLocalStore(), dir + "/train-images-idx3-ubyte.gz",
                                      dir + "/train-labels-idx1-ubyte.gz"));
  std::vector<Example> rows;
  for (Example& e : idx) rows.push_back(std::move(e));
  if (!idx.status().ok()) return idx.status();
  if (rows.empty()) return absl::NotFoundError("no rows in " + dir);
  const size_t row_bytes = rows[0].ByteSize();
  std::vector<uint8_t> all(rows.size() * row_bytes);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(all.data() + i * row_bytes, rows[i].components[0].buffer().data(), row_bytes);
  }
  const Buffer shared = Buffer::CopyOf(all.data(), all.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Tensor& t = rows[i].components[0];
    absl::StatusOr<Tensor> slice =
        Tensor::Make(t.dtype(), t.shape(), shared.Slice(i * row_bytes, row_bytes));
    if (!slice.ok()) return slice.status();
    rows[i].components[0] = *std::move(slice);
    rows[i].source_index = i;
  }
  return rows;
}

// Items per second of one epoch of the pipeline.
absl::StatusOr<double> Epoch(const std::vector<Example>& rows) {
  auto pipeline = FromVector(rows)
                      .Echo({.factor = absl::GetFlag(FLAGS_echo), .seed = 1})
                      .Shuffle({.buffer_size = absl::GetFlag(FLAGS_shuffle), .seed = 2})
                      .Batch({.batch_size = absl::GetFlag(FLAGS_batch_size),
                              .cast = DType::kFloat32,
                              .scale = 1.0f / 255,
                              .mean = {0.2860f},
                              .stddev = {0.3530f}});
  int64_t items = 0;
  int64_t last_label = 0;
  const int64_t t0 = internal::NowNanos();
  for (const Batch& b : pipeline) {
    items += b.num_rows;
    last_label += b.labels.data<int64_t>()[static_cast<size_t>(b.num_rows - 1)];
  }
  const double seconds = static_cast<double>(internal::NowNanos() - t0) * 1e-9;
  if (!pipeline.status().ok()) return pipeline.status();
  if (last_label < 0) return absl::InternalError("impossible label");  // keeps the reads
  return static_cast<double>(items) / seconds;
}

absl::Status Run() {
  absl::StatusOr<std::vector<Example>> rows = LoadRows(absl::GetFlag(FLAGS_data_dir));
  if (!rows.ok()) return rows.status();
  std::vector<double> rates;
  for (int r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
    absl::StatusOr<double> rate = Epoch(*rows);
    if (!rate.ok()) return rate.status();
    rates.push_back(*rate);
  }
  std::printf("%s\n", fmt::format(R"({{"items_per_second": [{}], "rows": {}}})",
                                  fmt::join(rates, ", "), rows->size())
                          .c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace dataecho

int main(int argc, char** argv) {
  return dataecho::bench::Main(argc, argv, "arrays_bench", dataecho::Run);
}
