// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/mix_core.h: the type-independent part of MixStage (mix.h): the
// draws, each input's bookkeeping for the current epoch, what happens when an
// input ends, the state section and the stats row. Compiled once, in
// src/mix.cc. Not part of the public API.
//
//   internal::MixCore core(options, inputs.size());   // options validated
//   int64_t i = core.Pick();                            // -1: the mix ended
//   ... pull input i; an element: core.Took(i, items, fresh, epoch); its end:
//   switch (core.Ended(i, &epoch)) { ... }
//
// Thread safety: the consumer thread only, but Report(), which any thread
// may call (it reads counters).
#ifndef DATAECHO_INTERNAL_MIX_CORE_H_
#define DATAECHO_INTERNAL_MIX_CORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/checkpoint.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/mix_options.h"
#include "dataecho/stats.h"

namespace dataecho::internal {

class DATAECHO_EXPORT MixCore {
 public:
  // REQUIRES: options.Validate(inputs) is OK.
  MixCore(const MixOptions& options, size_t inputs);

  // The input the draw at the current position picks among those still in
  // the epoch, or -1 if none is left (the mix ended).
  int64_t Pick() const;

  // Input `i` gave an element of `items` items (rows), `fresh` of them
  // fresh, of epoch `epoch`.
  void Took(size_t i, int64_t items, int64_t fresh, uint32_t epoch);

  // What to do after input `i` ended (reported by its Next()).
  enum class AfterEnd {
    kEnd,        // the mix ends (policy kStopOnFirstEmpty, or kRestartInput
                 // once every input with a weight has ended once)
    kDrawAgain,  // the input left the epoch; draw again at the same position
    kRestart,    // restart the input as `*epoch`, then Restarted(i, *epoch)
  };
  AfterEnd Ended(size_t i, uint32_t* epoch);
  void Restarted(size_t i, uint32_t epoch);

  // A new epoch of the mix: every input was restarted as `epoch`.
  void StartEpoch(uint32_t epoch);

  // The mix's own state section (after its inputs'), and its shape's hash.
  void Save(StateWriter& w) const;
  absl::Status Restore(StateReader& r);
  uint64_t OptionsHashValue() const;

  // The mix's stats row: `totals` with the per-input extras (mix.h, "Stats").
  StageStats Report(StageStats row) const;

  bool done() const { return done_; }
  void set_done() { done_ = true; }
  size_t size() const { return inputs_.size(); }

 private:
  struct Input {
    bool out = false;           // left this epoch (it ended, or gave nothing in a pass)
    bool ended_once = false;    // kRestartInput: ended at least once this epoch
    uint32_t epoch = 0;         // the epoch it was started as
    uint32_t newest = 0;        // the newest epoch among its elements
    int64_t pass_elements = 0;  // elements of its current pass
    int64_t emitted = 0;        // elements it gave this epoch
    int64_t fresh = 0;          // fresh items among them
    // Fresh items per element, an exponential moving average over about the
    // last 1 / kFreshRateWeight elements (weights_of = kFresh).
    double fresh_rate = 1.0;
  };
  static constexpr double kFreshRateWeight = 1.0 / 128;
  static constexpr double kMinFreshRate = 1e-6;  // a realized factor of at most 1e6
  // Lifetime counts for the stats (readable from any thread).
  struct Counts {
    Counter elements, fresh, items, passes;
  };

  MixOptions options_;
  std::vector<double> weights_;  // normalized
  std::vector<Input> inputs_;
  std::unique_ptr<Counts[]> counts_;
  uint32_t epoch_ = 0;     // the mix's epoch (Restart)
  uint64_t position_ = 0;  // elements emitted this epoch: the draw's key
  bool done_ = false;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MIX_CORE_H_
