// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// mix.h: mix pipelines of one element type with weights (tf.data's
// sample_from_datasets, torchdata's MultiNodeWeightedSampler).
//
// MixStage draws, for each element, the input to take it from: input i with
// probability weights[i] (normalized). The draw at position p of epoch e
// depends only on (seed, e, p) (and on which inputs have left the epoch), so
// the same seed and inputs give the same order, whatever the thread timing,
// and a checkpoint holds the position, not a generator:
//
//   // A large remote corpus read once with a small local set at 30 %,
//   // each input echoed by its own need:
//   std::vector<dataecho::Pipeline<dataecho::Example>> inputs;
//   inputs.push_back(std::move(remote).Prefetch({.depth = 64}).AdaptiveEcho({.max_factor = 6}));
//   inputs.push_back(std::move(local));
//   auto mixed = dataecho::Mix(std::move(inputs), {.weights = {0.7, 0.3},
//                                                  .seed = 1,
//                                                  .on_empty = dataecho::MixOnEmpty::kRestartInput,
//                                                  .weights_of = dataecho::MixWeightsOf::kFresh})
//                    .Shuffle({.buffer_size = 10000, .seed = 2})
//                    .Batch({.batch_size = 256});
//   // or: dataecho::MixStage<Example>::Make(std::move(stages), options)
//
// WHEN AN INPUT ENDS (MixOptions::on_empty; mix_options.h). An input's end is
// seen when a draw picks it and it has nothing more:
//   kStopOnFirstEmpty      the mix ends there (tf.data's
//                          stop_on_empty_dataset=True; torchdata's
//                          FIRST_DATASET_EXHAUSTED). Every element comes at
//                          most once; the other inputs are cut short.
//   kContinueRenormalized  (default) the input leaves the epoch and the draw
//                          is made again over the others, their weights
//                          renormalized; the mix ends when every input with a
//                          weight has ended (tf.data's default; torchdata's
//                          ALL_DATASETS_EXHAUSTED). Every element of every
//                          input with a weight comes exactly once per epoch;
//                          the weights hold while all inputs have elements.
//   kRestartInput          the input starts over as its own next epoch
//                          (Stage::Restart; its epoch is one past the newest
//                          it gave) and keeps its weight, so the weights hold
//                          for the whole epoch; the mix ends once every input
//                          with a weight has ended at least once (torchdata's
//                          CYCLE_UNTIL_ALL_DATASETS_EXHAUSTED). Each pass of
//                          an input gives each of its elements once; the pass
//                          cut short by the mix's end gives them at most once.
//                          The inputs must be able to start over (checked by
//                          Make); an input whose pass gave nothing leaves the
//                          epoch instead of spinning.
// An input of weight 0 is never read. For an endless mix, put .Repeat() on
// each input (kContinueRenormalized then never renormalizes).
//
// ECHO PER INPUT. Each input may carry its own echo (`.Echo()`,
// `.AdaptiveEcho()`, `.AutoEcho()` on that input, after its Prefetch), so that
// only a slow input is echoed. MixOptions::weights_of says what the weights
// are shares of:
//   kEmitted  (default) of the elements the mix emits, fresh or echoed: input
//             i gives a weights[i] share of the stream.
//   kFresh    of the fresh items: the draw weights input i by weights[i]
//             times its recent realized echo factor (elements per fresh item,
//             an exponential moving average over about its last 128
//             elements, from 1 at the start of an epoch), so each input's
//             share of the fresh items tends to its weight while its echo
//             factor is steady, and follows an adaptive echo's factor as it
//             changes. With fixed echo the realized factors, hence the draws,
//             are deterministic; adaptive echo's depend on timing (as its
//             output does).
//
// EPOCHS AND SHARDING. Restart(e) restarts every input as epoch e and forgets
// the position and every input's end: what follows depends only on e (a
// Repeat above the mix, or set_epoch in Python, gives each epoch its own
// draws). Elements keep the epoch their input stamped. Each rank mixes its
// own shards: shard each input (ShardOptions on its source) and mix them.
//
// CHECKPOINTS (stage.h, docs/checkpoint.md). The state is each input's state,
// in order, then the mix's section: its epoch and position, and per input
// whether it ended, its epoch, its counts this epoch and its recent factor.
// References (a Shuffle
// or Echo after the mix): the input that gave each element (found by its
// payload, as Interleave does: the stages between the mix and the one that
// holds elements must pass them on as they are), then that input's own
// references. Numbers are their own references.
//
// Stats: each input's stages, input by input, then the mix row: elements,
// bytes, input_wait, and per input i "input{i}_weight" (normalized),
// "input{i}_elements" (elements it gave), "input{i}_fresh" (fresh items among
// them), "input{i}_echoed" (repeated items) and "input{i}_passes" (passes
// started: restarts under kRestartInput, epochs).
//
// Inputs run in the consumer's thread, one pull at a time, unless they end in
// a Prefetch (then they read ahead in parallel).
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_MIX_H_
#define DATAECHO_MIX_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/mix_core.h"
#include "dataecho/internal/mix_refs.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/mix_options.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename T>
class MixStage final : public Stage<T> {
 public:
  // INVALID_ARGUMENT for no input, a null one or bad options (naming the
  // option); under kRestartInput, an input's EnableRestart() error.
  static absl::StatusOr<StagePtr<T>> Make(std::vector<StagePtr<T>> inputs,
                                          MixOptions options = {}) {
    DATAECHO_RETURN_IF_ERROR(options.Validate(inputs.size()));
    for (const StagePtr<T>& in : inputs) {
      DATAECHO_RETURN_IF_ERROR(internal::CheckInput(in, options.name));
    }
    if (options.on_empty == MixOnEmpty::kRestartInput) {
      for (StagePtr<T>& in : inputs) DATAECHO_RETURN_IF_ERROR(in->EnableRestart());
    }
    return StagePtr<T>(new MixStage(std::move(inputs), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (cancelled_.load(std::memory_order_relaxed)) return CancelledError();
    if (!status_.ok()) return status_;
    while (!core_.done()) {
      const int64_t i = core_.Pick();
      if (i < 0) break;
      absl::StatusOr<std::optional<T>> r;
      totals_.input_wait_ns.Add(internal::PullTimed(*inputs_[i], &r));
      if (!r.ok()) {
        if (!cancelled_.load(std::memory_order_relaxed)) status_ = r.status();
        return r;
      }
      if (r->has_value()) {
        const T& v = **r;
        core_.Took(static_cast<size_t>(i), ElementTraits<T>::ItemCount(v),
                   ElementTraits<T>::FreshCount(v), internal::EpochOf(v));
        totals_.elements.Add(1);
        totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(v)));
        if constexpr (Refs::kEnabled) refs_.Remember(v, static_cast<uint32_t>(i));
        return r;
      }
      uint32_t epoch = 0;
      switch (core_.Ended(static_cast<size_t>(i), &epoch)) {
        case internal::MixCore::AfterEnd::kEnd:
        case internal::MixCore::AfterEnd::kDrawAgain: break;
        case internal::MixCore::AfterEnd::kRestart:
          if (absl::Status s = inputs_[i]->Restart(epoch); !s.ok()) return status_ = s;
          core_.Restarted(static_cast<size_t>(i), epoch);
          break;
      }
    }
    core_.set_done();
    return std::nullopt;
  }

  absl::Status EnableRestart() override {
    for (StagePtr<T>& in : inputs_) DATAECHO_RETURN_IF_ERROR(in->EnableRestart());
    return absl::OkStatus();
  }
  // Every input starts over as epoch `epoch`; the position and the inputs'
  // ends are forgotten (see the file comment).
  absl::Status Restart(uint32_t epoch) override {
    if (!status_.ok()) return status_;
    for (StagePtr<T>& in : inputs_) DATAECHO_RETURN_IF_ERROR(in->Restart(epoch));
    core_.StartEpoch(epoch);
    return absl::OkStatus();
  }

  // State: each input's, in order, then the mix's section.
  absl::Status SaveState(StateWriter& w) override {
    if (!status_.ok()) return CannotSaveAfterError(options_.name, status_);
    for (StagePtr<T>& in : inputs_) DATAECHO_RETURN_IF_ERROR(in->SaveState(w));
    w.BeginStage(options_.name, core_.OptionsHashValue());
    core_.Save(w);
    return absl::OkStatus();
  }
  absl::Status RestoreState(StateReader& r) override {
    for (StagePtr<T>& in : inputs_) DATAECHO_RETURN_IF_ERROR(in->RestoreState(r));
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(options_.name));
    return core_.Restore(r);
  }
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    if constexpr (std::is_arithmetic_v<T>) {
      return Stage<T>::SaveRefs(items, w);
    } else if constexpr (!Refs::kEnabled) {
      (void)items;
      (void)w;
      return Refs::NotReferenced(options_.name, "only records, examples and batches are traced");
    } else {
      return refs_.Save(items, w, options_.name, Inputs());
    }
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    if constexpr (std::is_arithmetic_v<T>) {
      return Stage<T>::Reread(r, n, out);
    } else if constexpr (!Refs::kEnabled) {
      (void)r;
      (void)n;
      (void)out;
      return Refs::NotReferenced(options_.name, "only records, examples and batches are traced");
    } else {
      return refs_.Reread(r, n, out, options_.name, Inputs());
    }
  }

  void Cancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    for (StagePtr<T>& in : inputs_) in->Cancel();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    for (const StagePtr<T>& in : inputs_) in->AppendStats(out);
    out->push_back(core_.Report(totals_.Report(options_.name)));
  }

 private:
  using Refs = internal::MixRefs<T>;

  MixStage(std::vector<StagePtr<T>> inputs, MixOptions options)
      : inputs_(std::move(inputs)), options_(std::move(options)), core_(options_, inputs_.size()) {
    for (StagePtr<T>& in : inputs_) raw_.push_back(in.get());
  }

  std::span<Stage<T>* const> Inputs() const { return raw_; }

  std::vector<StagePtr<T>> inputs_;
  std::vector<Stage<T>*> raw_;  // inputs_, unowned (for the references)
  const MixOptions options_;
  internal::MixCore core_;  // consumer thread only, but its Report()
  Refs refs_;               // consumer thread only
  std::atomic<bool> cancelled_{false};
  absl::Status status_;  // an input's error: sticky (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;
};

}  // namespace dataecho

#endif  // DATAECHO_MIX_H_
