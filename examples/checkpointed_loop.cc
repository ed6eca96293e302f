// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// A training loop that saves its input pipeline and its model in one
// checkpoint file, is stopped half way, and resumes exactly where it was.
//
// The pipeline reads Fashion-MNIST's IDX files, echoes, shuffles and batches;
// the "model" is a running digest of every batch trained on (a real trainer
// saves its weights there). Every 50 steps the loop writes the pipeline's
// state and the model's bytes as two sections of one file (CheckpointDir:
// atomic, one writer per directory, the newest two kept). The program runs
// the loop once without a stop, then again stopped after 120 steps -- the
// pipeline, the directory and the model all destroyed, as in a killed job --
// and resumed from the newest checkpoint; both runs train on the same
// batches, so their digests are equal.
//
//   checkpointed_loop [DIR]   (default: a directory under /tmp)
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "dataecho/dataecho.h"

namespace {

constexpr const char* kData = "/usr/share/datasets/fashion-mnist/";
constexpr int64_t kSteps = 300, kEvery = 50;

dataecho::Pipeline<dataecho::Batch> Build() {
  auto store = std::shared_ptr<dataecho::ObjectStore>(dataecho::OpenObjectStore());
  return dataecho::From(dataecho::MakeIdxSource(store,
                                                std::string(kData) + "train-images-idx3-ubyte.gz",
                                                std::string(kData) + "train-labels-idx1-ubyte.gz"))
      .Prefetch({.depth = 64})
      .Echo({.factor = 2.0, .seed = 1})
      .Shuffle({.buffer_size = 1000, .seed = 2})
      .Batch({.batch_size = 64, .cast = dataecho::DType::kFloat32, .scale = 1.0f / 255});
}

// Trains until step `stop`, resuming from DIR's newest checkpoint if any;
// the model's digest at the end.
absl::StatusOr<uint64_t> Train(const std::string& dir_path, int64_t stop) {
  absl::StatusOr<std::unique_ptr<dataecho::CheckpointDir>> dir =
      dataecho::CheckpointDir::OpenForWriting(dir_path, {.keep = 2});
  if (!dir.ok()) return dir.status();
  dataecho::Pipeline<dataecho::Batch> pipeline = Build();
  uint64_t model = 0;
  int64_t step = 0;
  absl::StatusOr<std::optional<dataecho::Checkpoint>> last = (*dir)->ReadNewest();
  if (!last.ok()) return last.status();
  if (last->has_value()) {
    const dataecho::Checkpoint& c = **last;
    const std::string* state = c.Section("pipeline");
    const std::string* weights = c.Section("model");
    if (state == nullptr || weights == nullptr || weights->size() != sizeof(model)) {
      return absl::DataLossError(c.path + ": not this loop's checkpoint");
    }
    if (absl::Status s = pipeline.RestoreState(*state); !s.ok()) return s;
    std::memcpy(&model, weights->data(), sizeof(model));
    step = c.step;
    std::printf("resumed at step %lld from %s\n", static_cast<long long>(step), c.path.c_str());
  }
  for (; step < stop; ++step) {
    absl::StatusOr<std::optional<dataecho::Batch>> batch = pipeline.Next();
    if (!batch.ok()) return batch.status();
    if (!batch->has_value()) break;
    for (float x : (*batch)->components[0].data<float>()) {  // one "training step"
      model = model * 1099511628211ull + static_cast<uint64_t>(x * 255.0f);
    }
    if ((step + 1) % kEvery == 0) {
      absl::StatusOr<absl::Cord> state = pipeline.SaveStateCord();
      if (!state.ok()) return state.status();
      std::string weights(sizeof(model), '\0');
      std::memcpy(weights.data(), &model, sizeof(model));
      absl::Status s = (*dir)->Write(
          step + 1, {{"pipeline", *std::move(state)}, {"model", absl::Cord(std::move(weights))}});
      if (!s.ok()) return s;
    }
  }
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string base =
      argc > 1 ? argv[1] : "/tmp/checkpointed_loop-" + std::to_string(::getpid());
  std::filesystem::remove_all(base);
  absl::StatusOr<uint64_t> whole = Train(base + "/whole", kSteps);
  absl::StatusOr<uint64_t> stopped = Train(base + "/stopped", 120);  // "killed" at step 120
  absl::StatusOr<uint64_t> resumed = Train(base + "/stopped", kSteps);
  for (const auto* r : {&whole, &stopped, &resumed}) {
    if (!r->ok()) {
      std::fprintf(stderr, "%s\n", r->status().ToString().c_str());
      return 1;
    }
  }
  std::printf("uninterrupted %016llx, stopped and resumed %016llx: %s\n",
              static_cast<unsigned long long>(*whole), static_cast<unsigned long long>(*resumed),
              *whole == *resumed ? "identical" : "DIFFERENT");
  if (argc <= 1) std::filesystem::remove_all(base);
  return *whole == *resumed ? 0 : 1;
}
