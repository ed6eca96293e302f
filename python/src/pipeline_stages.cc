// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The generic stages of dataecho.Pipeline (any element type) and batch().
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>

#include "bind_stage.h"
#include "py_pipeline.h"
#include "seed_stream.h"
#include "shard_stage.h"
#include "status.h"

namespace dataecho::python {

void RegisterStages(py::module_& m, PipelineClass& cls) {
  m.def(
      "_seed_stream", [](std::optional<uint64_t> stream) { SetSeedStream(stream); },
      py::arg("stream"),
      "Mixes `stream` into the seeds of the shuffle and echo stages built on this thread from "
      "now on (None: seeds as given). dataecho.torch sets it to a worker's place in the job "
      "while build() runs.");
  m.def(
      "_planner_memory",
      [](const std::optional<py::dict>& memory) {
        if (!memory.has_value()) {
          SetPlannerMemory(std::nullopt);
          return;
        }
        // The "echo_planner" stats row's values (milliseconds) as the planner's memory.
        const py::dict& d = *memory;
        auto ms = [&](const char* key) { return d[key].cast<double>() * 1e-3; };
        EchoPlannerMemory m;
        m.placement = static_cast<int>(d["placement"].cast<double>());
        m.factor = d["factor"].cast<double>();
        m.costs.upstream_cpu = ms("cost_upstream_cpu_ms");
        m.costs.augment_cpu = ms("cost_augment_cpu_ms");
        m.costs.row_cpu = ms("cost_row_cpu_ms");
        m.costs.upstream_time = ms("upstream_ms_per_item");
        m.costs.step = ms("step_ms");
        SetPlannerMemory(m);
      },
      py::arg("memory"),
      "Starts the echo planner of echoed_batches(placement='auto' or 'adaptive') built on this "
      "thread from now on from an earlier planner's stats row (placement, factor and costs; "
      "None: measure first). dataecho.torch sets it to the worker's last epoch's planner while "
      "build() runs.");
  BindStage<PrefetchOptions>(
      cls, "prefetch",
      "Runs the pipeline so far ahead on a thread of its own, into a queue of `depth` "
      "elements: the boundary echo needs upstream of it.",
      [](auto p, const PrefetchOptions& o) { return std::move(p).Prefetch(o); });
  BindStage<EchoOptions>(
      cls, "echo",
      "Data echoing: emits each element `factor` times (copies back to back, repeats "
      "marked; follow example echoing with shuffle). After batch(): batch echoing. Place it "
      "after a prefetch.",
      [](auto p, const EchoOptions& o) { return std::move(p).Echo(o); },
      [](const Length& in, const EchoOptions& o) { return EchoedLength(in, o.factor); });
  BindStage<AdaptiveEchoOptions>(
      cls, "adaptive_echo",
      "Echoes only while the upstream has nothing ready: emits a fresh element when one is "
      "ready, else a repeat of a recent one (at most max_factor emissions each). Its output "
      "depends on timing. Place it after a prefetch. (The C++ record_decisions, repeat_gate "
      "and clock options are not bound.)",
      [](auto p, const AdaptiveEchoOptions& o) { return std::move(p).AdaptiveEcho(o); });
  BindStage<AutoEchoOptions>(
      cls, "auto_echo",
      "Adaptive echo for a warm-up, then a fixed factor: the measured ratio of upstream to "
      "consumer time, capped at adaptive.max_factor.",
      [](auto p, const AutoEchoOptions& o) { return std::move(p).AutoEcho(o); });
  BindStage<ShuffleOptions>(
      cls, "shuffle",
      "A seeded shuffle buffer of `buffer_size` elements; spreads echoed copies apart.",
      [](auto p, const ShuffleOptions& o) { return std::move(p).Shuffle(o); });
  BindStage<ThrottleOptions>(
      cls, "throttle",
      "Delays each element by `latency` seconds and/or a bandwidth cap: makes an upstream "
      "slow on purpose (benchmarks, tests).",
      [](auto p, const ThrottleOptions& o) { return std::move(p).Throttle(o); });

  DefSigned(
      cls, Signature("repeat").Arg("self").Arg("epochs=-1"),
      "Runs the pipeline so far `epochs` times (forever if -1), numbering the passes: "
      "elements carry their `epoch` (0, 1, ...), and the seeded stages (augmenters, echo, "
      "shuffle) and file sources (file order) give each epoch its own draws; the same seed "
      "and epoch give the same ones. The stages below it must be able to start over: put it "
      "right after the source or after a shuffle, before a parallel map or a prefetch "
      "(else UnimplementedError naming the stage). An empty pass ends it. (C++ Repeat.)",
      [](PipelineHandle& self, int64_t epochs) {
        auto out = Then(self, "repeat",
                        [&](auto p) -> AnyPipeline { return std::move(p).Repeat(epochs); });
        out->set_length(RepeatedLength(self.length(), epochs));
        return out;
      },
      py::arg("epochs") = -1);

  DefSigned(
      cls, Signature("take").Arg("self").Arg("n"),
      "The first `n` elements (all of them if n < 0); the input is not read further.",
      [](PipelineHandle& self, int64_t n) {
        auto out = Then(self, "take", [&](auto p) -> AnyPipeline { return std::move(p).Take(n); });
        out->set_length(TakenLength(self.length(), n));
        return out;
      },
      py::arg("n"));

  BindStage<ShardOptions>(
      cls, "shard",
      "Keeps elements rank, rank + world_size, ... of the stream: splits it between the "
      "workers of a job (each still reads the whole stream; file sources split their "
      "files instead, see from_tfrecord). Rank and world size default to the launcher's "
      "environment (RANK/WORLD_SIZE, ...), as dataecho.resolve_shard().",
      [](auto p, const Shard& shard) {
        using T = typename decltype(p)::value_type;
        return std::move(p).Apply(
            [&](StagePtr<T> in) { return ShardStage<T>::Make(std::move(in), shard); });
      },
      [](const Length& in, const Shard& shard) {
        return ShardedLength(in, shard.rank, shard.world_size);
      });

  BindStage<BatchOptions>(
      cls, "batch",
      "Examples to fused Batches: each component's rows copied once into one aligned "
      "buffer, optionally cast to float32/float16/bfloat16 and normalized in the same "
      "pass. Buffers are pooled and reused once no batch or view holds them.",
      OnlyOn<Example>(
          "batch", [](auto p, const BatchOptions& o) { return std::move(p).Batch(o); },
          ": decode them first, e.g. .map(dataecho.decode_image_record)"),
      [](const Length& in, const BatchOptions& o) {
        return BatchedLength(in, static_cast<int64_t>(o.batch_size), o.drop_remainder);
      });
}

}  // namespace dataecho::python
