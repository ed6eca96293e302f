// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "mpi_trainer/step.h"

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numbers>
#include <thread>

#include "dataecho/augment.h"
#include "dataecho/echo_planner.h"
#include "dataecho/record.h"
#include "dataecho/text.h"
#include "fmt/format.h"
#include "mpi_trainer/job_checkpoint.h"
#include "mpi_trainer/rank_data.h"
#include "trainer/mlp.h"

namespace step {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

float LearningRate(const trainer::TrainOptions& o, int64_t fresh) {
  if (o.lr_schedule != "cosine") return o.learning_rate;
  const double progress =
      std::min(1.0, static_cast<double>(fresh) / static_cast<double>(o.fresh_budget));
  return static_cast<float>(o.learning_rate * 0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
}

// The fused buffer: every layer's weight and bias gradients, then rows and
// fresh rows of the step.
class FusedGradients {
 public:
  explicit FusedGradients(const trainer::Mlp& model) {
    size_t n = 0;
    for (const trainer::DenseLayer& l : model.layers()) n += l.weights.size() + l.bias.size();
    params_ = n;
    buffer_.resize(n + 2);
  }

  // This rank's contribution: gradients (of the mean loss) times `rows`.
  void Pack(const trainer::Mlp& model, int rows, int fresh) {
    float* p = buffer_.data();
    const float w = static_cast<float>(rows);
    for (const trainer::DenseLayer& l : model.layers()) {
      for (float g : l.grad_weights) *p++ = rows > 0 ? g * w : 0.0f;
      for (float g : l.grad_bias) *p++ = rows > 0 ? g * w : 0.0f;
    }
    buffer_[params_] = w;
    buffer_[params_ + 1] = static_cast<float>(fresh);
  }

  // The job's mean gradient into the model.
  void Unpack(trainer::Mlp& model) const {
    const float* p = buffer_.data();
    const float scale = 1.0f / rows();
    for (trainer::DenseLayer& l : model.layers()) {
      for (float& g : l.grad_weights) g = *p++ * scale;
      for (float& g : l.grad_bias) g = *p++ * scale;
    }
  }

  float* data() { return buffer_.data(); }
  int size() const { return static_cast<int>(buffer_.size()); }
  float rows() const { return buffer_[params_]; }
  float fresh() const { return buffer_[params_ + 1]; }

 private:
  size_t params_ = 0;
  std::vector<float> buffer_;
};

// Appends "<epoch> <source_index>" (the shard's index in the list, record.h)
// of the fresh rows of `b` to `out`, and marks them in `tracker` (if any).
void NoteFresh(const dataecho::Batch& b, const JobOptions& job, std::FILE* out,
               elastic::Tracker* tracker) {
  const int64_t* sources = b.source_indices.data<int64_t>().data();
  const int32_t* repeats = b.repeat_indices.data<int32_t>().data();
  for (int64_t i = 0; i < b.num_rows; ++i) {
    if (repeats[i] != 0) continue;
    const rank_data::RowOrigin row =
        rank_data::Origin(static_cast<uint64_t>(sources[i]), job.layout);
    const uint64_t source = dataecho::MakeSourceIndex(row.file, row.record);
    if (out != nullptr) {
      std::fprintf(out, "%llu %llu\n", static_cast<unsigned long long>(row.epoch),
                   static_cast<unsigned long long>(source));
    }
    if (tracker != nullptr) tracker->Trained(row.epoch, source);
  }
}

// A checksum of the weights; MIN and MAX over the ranks agree iff all agree.
bool ModelsIdentical(const trainer::Mlp& model) {
  uint64_t h = 1469598103934665603ull;
  for (const trainer::DenseLayer& l : model.layers()) {
    for (const std::vector<float>* v : {&l.weights, &l.bias}) {
      for (float x : *v) {
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof(bits));
        h = (h ^ bits) * 1099511628211ull;
      }
    }
  }
  uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

}  // namespace

absl::StatusOr<JobResult> Train(const JobOptions& job, int rank, int world,
                                trainer::TrainData& data, const Restored* restored,
                                std::string_view shard_mode) {
  const trainer::TrainOptions& o = job.train;
  std::optional<trainer::TestSet> test;
  if (rank == 0) {
    absl::StatusOr<trainer::TestSet> loaded = trainer::LoadTestSet(o);
    if (!loaded.ok()) return loaded.status();
    test = *std::move(loaded);
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> dump(nullptr, &std::fclose);
  if (!job.dump_dir.empty()) {
    absl::StatusOr<std::FILE*> opened = OpenDump(job, rank, world, restored);
    if (!opened.ok()) return opened.status();
    dump.reset(*opened);
  }

  trainer::Mlp model(trainer::kLayerSizes, o.seed);  // the same initial weights on every rank
  trainer::Sgd sgd(model, {.learning_rate = o.learning_rate, .momentum = o.momentum});
  FusedGradients fused(model);
  JobResult result;
  trainer::TrainResult& r = result.train;
  r.echo = o.echo;
  r.insert = o.insert;
  result.fused_floats = fused.size();
  RankRunning running;
  trainer::LoopState loop{.next_eval = o.eval_every};
  elastic::Tracker tracker(job.counts);
  if (restored != nullptr) {
    trainer::StateReader model_state(restored->model, restored->path);
    trainer::RestoreModel(model_state, model, sgd);
    if (absl::Status s = model_state.Finish(); !s.ok()) return s;
    r = restored->train;
    r.echo = o.echo;
    r.insert = o.insert;
    loop = restored->loop;
    // The per-rank counts carry over at the same world size only.
    if (restored->world == world) {
      running.fresh = static_cast<int64_t>(restored->fresh_per_rank[rank]);
      running.rows = static_cast<int64_t>(restored->rows_per_rank[rank]);
      running.digest = restored->digests[rank];
    }
    // Continuing the run: its pipelines where they were, its trained flags.
    if (restored->continues_run) {
      if (absl::Status s = data.RestoreState(restored->pipelines[rank]); !s.ok()) {
        return absl::Status(s.code(), fmt::format("checkpoint {}: restoring rank {}'s pipeline: {}",
                                                  restored->path, rank, std::string(s.message())));
      }
      for (size_t i = 0; i < restored->trained.size(); ++i) {
        tracker.Seed(job.start.first_epoch + i, restored->trained[i]);
      }
    }
  }
  const bool checkpoints = o.checkpoint_every > 0;
  int64_t written = 0;  // checkpoints this run wrote
  double& train_seconds = loop.train_seconds;
  Clock::time_point resumed = Clock::now();
  auto evaluate = [&] {
    if (rank != 0) return;
    train_seconds += Seconds(resumed);
    r.final_test_accuracy = trainer::Evaluate(model, *test, o.target_accuracy, train_seconds, &r);
    resumed = Clock::now();
  };

  int64_t& next_eval = loop.next_eval;
  bool exhausted = false;
  while (true) {
    int rows = 0, fresh = 0;
    if (!exhausted) {
      const Clock::time_point asked = Clock::now();
      absl::StatusOr<std::optional<dataecho::Batch>> batch = data.Next();
      r.data_wait_seconds += Seconds(asked);
      if (!batch.ok()) return batch.status();
      if (batch->has_value()) {
        const dataecho::Batch& b = **batch;
        rows = static_cast<int>(b.num_rows);
        fresh = static_cast<int>(b.fresh_rows);
        model.ComputeGradients(b.components[0].data<float>().data(),
                               b.labels.data<int64_t>().data(), rows);
        if (dump != nullptr || checkpoints) {
          NoteFresh(b, job, dump.get(), checkpoints ? &tracker : nullptr);
        }
        running.digest = trainer::DigestBatch(running.digest, b);
      } else {
        exhausted = true;
      }
    }
    fused.Pack(model, rows, fresh);
    const Clock::time_point t0 = Clock::now();
    MPI_Allreduce(MPI_IN_PLACE, fused.data(), fused.size(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    result.allreduce_seconds += Seconds(t0);
    if (fused.rows() == 0) break;  // every rank's data ended
    fused.Unpack(model);
    sgd.Step(model, LearningRate(o, r.fresh_examples_total));
    running.rows += rows;
    running.fresh += fresh;
    ++r.steps_total;
    r.examples_total += static_cast<int64_t>(fused.rows());
    r.fresh_examples_total += static_cast<int64_t>(fused.fresh());
    if (r.fresh_examples_total >= next_eval) {
      evaluate();
      while (next_eval <= r.fresh_examples_total) next_eval += o.eval_every;
    }
    if (job.epochs == 0 && r.fresh_examples_total >= o.fresh_budget) break;
    if (job.stop_after_steps > 0 && r.steps_total >= job.stop_after_steps) break;
    if (checkpoints && r.steps_total % o.checkpoint_every == 0) {
      trainer::LoopState saved = loop;
      if (rank == 0) saved.train_seconds += Seconds(resumed);
      absl::Status s = WriteJobCheckpoint(
          job, shard_mode, rank, world, model, sgd, r, saved, tracker, running, data, dump.get(),
          restored != nullptr ? restored->dump_sizes : std::vector<uint64_t>{});
      if (!s.ok()) return s;
      if (++written == job.hold_after_checkpoints) {
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // until killed
      }
    }
  }
  if (r.curve.empty() || r.curve.back().fresh_examples != r.fresh_examples_total) evaluate();
  if (rank == 0) train_seconds += Seconds(resumed);
  r.seconds_total = train_seconds;
  if (r.fresh_examples_total > 0) {
    r.realized_echo_factor =
        static_cast<double>(r.examples_total) / static_cast<double>(r.fresh_examples_total);
  }
  if (r.insert == trainer::EchoInsert::kAuto) {  // this rank's planner's decisions
    for (const dataecho::StageStats& row : data.Stats()) {
      if (row.name == dataecho::AutoPlacementOptions{}.name) r.decisions = row.notes;
    }
  }
  result.fresh_per_rank.resize(static_cast<size_t>(world));
  result.rows_per_rank.resize(static_cast<size_t>(world));
  MPI_Gather(&running.fresh, 1, MPI_INT64_T, result.fresh_per_rank.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  MPI_Gather(&running.rows, 1, MPI_INT64_T, result.rows_per_rank.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  // The job's data digest: the ranks' digests folded in rank order (comparable
  // between jobs of the same world size).
  std::vector<uint64_t> digests(static_cast<size_t>(world));
  MPI_Gather(&running.digest, 1, MPI_UINT64_T, digests.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  r.data_digest = 0;
  for (int i = 0; rank == 0 && i < world; ++i) {
    r.data_digest = dataecho::MixSeed(r.data_digest, digests[i], static_cast<uint64_t>(i));
  }
  result.models_identical = ModelsIdentical(model);
  if (dump != nullptr && std::fflush(dump.get()) != 0) {
    return absl::UnavailableError("cannot write the fresh indices to " + job.dump_dir);
  }
  return result;
}

std::string ResultToJson(const JobResult& result, const JobOptions& job, int world,
                         std::string_view shard_mode) {
  std::string json = trainer::ResultToJson(result.train);
  while (!json.empty() && (json.back() == '\n' || json.back() == '}')) json.pop_back();
  auto list = [](const std::vector<int64_t>& v) {
    std::string s;
    for (int64_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
    return "[" + s + "]";
  };
  using dataecho::JsonNumber;
  json += fmt::format(
      ", \"ranks\": {}, \"batch_size_per_rank\": {}, \"global_batch_size\": {}, "
      "\"shard_mode\": {}, \"epochs\": {}, \"fresh_examples_per_rank\": {}, "
      "\"rows_per_rank\": {}, \"allreduce_seconds\": {}, \"fused_floats\": {}, "
      "\"index_seconds\": {}, \"models_identical\": {}}}\n",
      world, job.train.batch_size, world * job.train.batch_size, dataecho::JsonQuote(shard_mode),
      job.epochs, list(result.fresh_per_rank), list(result.rows_per_rank),
      JsonNumber(result.allreduce_seconds), result.fused_floats, JsonNumber(job.index_seconds),
      result.models_identical ? "true" : "false");
  return json;
}

}  // namespace step
