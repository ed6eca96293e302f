// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// map_parallelism.h: a Map's worker count that can be raised while it runs,
// and what the Map measured, for whoever raises it.
//
// A Map built with MapOptions::parallelism_control (map.h) runs at least
// `requested()` workers, reading the count at every Next(): raising it starts
// more workers at once (an inline Map becomes a parallel one, as a kAutotune
// Map does once it has chosen). The count is never lowered. Results stay in
// input order (unless the Map says `deterministic = false`) and its
// checkpoints are the same whatever the count (map.h, "Checkpoints").
// EchoedBatches' auto placement (echo_placement.h) raises a decode Map's
// workers this way when that Map is the bottleneck and pipeline cores are left.
//
//   auto decode_workers = std::make_shared<dataecho::MapParallelism>();
//   auto decoded = dataecho::From(std::move(records))
//                      .Map(Decode, {.parallelism = 1, .name = "decode",
//                                    .parallelism_control = decode_workers})
//                      .Prefetch({.depth = 256});
//   ...
//   decode_workers->Raise(2);  // a second worker from the Map's next Next() on
//   dataecho::MapParallelism::Reading r = decode_workers->Read();  // r.workers, r.busy_ns, ...
//
// Thread safety: thread-safe. One Map per MapParallelism (a second Map that
// attaches replaces the first as the one Read() reports).
#ifndef DATAECHO_MAP_PARALLELISM_H_
#define DATAECHO_MAP_PARALLELISM_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/export.h"

namespace dataecho {

class DATAECHO_EXPORT MapParallelism {
 public:
  // The most workers a Map runs (MapOptions::parallelism's bound).
  static constexpr int kMaxWorkers = 1024;

  // What the attached Map measured since it was built (all 0 before).
  struct Reading {
    std::string name;              // the Map's (MapOptions::name)
    bool attached = false;         // a Map is attached
    int workers = 0;               // workers now (0: inline)
    int64_t elements = 0;          // results it returned
    int64_t bytes = 0;             // their bytes
    int64_t busy_ns = 0;           // time in fn, summed over the workers (inline: the caller's)
    int64_t consumer_wait_ns = 0;  // its consumer waited for a result
    int64_t input_wait_ns = 0;     // it waited for its input
  };

  // At least `workers` workers from the Map's next Next() on (clamped to
  // [0, kMaxWorkers]); a lower count than requested() changes nothing.
  void Raise(int workers);
  // The largest count raised to (0 until raised).
  int requested() const { return requested_.load(std::memory_order_relaxed); }
  // The attached Map's figures.
  Reading Read() const;

  // For MapStage (map.h): the function that reads its figures, or nullptr to
  // detach (its destructor does, before it goes).
  void Attach(std::function<Reading()> reader);

 private:
  std::atomic<int> requested_{0};
  mutable absl::Mutex mu_;
  std::function<Reading()> reader_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dataecho

#endif  // DATAECHO_MAP_PARALLELISM_H_
