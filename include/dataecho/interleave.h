// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// interleave.h: read several inputs round-robin, tf.data's interleave.
//
// InterleaveStage maps each element of its input (a file name, a shard, a
// pipeline) to a pipeline of U with `fn`, keeps `cycle_length` of those open
// and takes `block_length` consecutive elements from each in turn. When one
// ends, the next input element opens a new one in its place (and is read at
// once); the stage ends when its input and every open pipeline have ended.
// The order depends only on the inputs, never on timing:
//
//   // Four files read round-robin, one record from each in turn:
//   auto records = dataecho::FromVector(files).Interleave(
//       [&](std::string f) { return dataecho::From(dataecho::MakeTFRecordSource(store, {f})); },
//       {.cycle_length = 4});
//   // Pipelines of the same type, two records from each in turn:
//   auto mixed = dataecho::Interleave(std::move(pipelines), {.cycle_length = 3, .block_length =
//   2});
//
// `fn` takes the input element and returns a Pipeline<U>, a StagePtr<U> or an
// absl::StatusOr<StagePtr<U>>. An error (from the input, from `fn`, from a
// pipeline that failed to build or from an open pipeline) comes out in order
// and stays.
//
// Interleave itself runs in the consumer's thread. Only the open pipelines
// have started (a pipeline's threads start on its first Next()), so
// `cycle_length` bounds the reads in flight; end each pipeline in a Prefetch
// to read them in parallel. The slots are made as inputs open, never
// `cycle_length` of them up front: a cycle_length above the number of inputs
// (even INT64_MAX) costs nothing and opens every input at once. (The record
// sources' own `cycle_length`, record_source.h, is a parallel interleave of
// files with reader threads.)
//
// Epochs and checkpoints (stage.h, docs/checkpoint.md): Restart(e) restarts
// the input and closes every open pipeline (the next pass opens them again
// with `fn`). The state is the input's (behind the elements that opened
// pipelines), then, per slot, the element that opened its pipeline (a string
// by value, else its input's reference) and that pipeline's own state; a
// restore calls `fn` again on those elements and restores what it returns,
// so `fn` must build the same pipeline for the same element. An input whose
// elements cannot be copied (pipelines) cannot be saved.
//
// References (a Shuffle or Echo after an Interleave: stage.h's SaveRefs and
// Reread). A Record, Example or Batch it emitted is referenced as the element
// that opened its pipeline (as above), then that pipeline's own reference to
// it; a restore calls `fn` again on that element and has the new pipeline read
// the referenced elements again. The stage knows which pipeline made an
// element by the element's payload (it keeps a handle to each emitted element
// while a later stage holds it, and at most a quarter more plus 64 elements
// that no stage holds any more), so the stages between the Interleave and the
// one that holds elements must pass elements on as they are (Echo, Shuffle,
// Prefetch, Filter, Take, Repeat...): an element a Map after the Interleave
// made is not found (FAILED_PRECONDITION naming the interleave; put the Map
// inside the interleaved pipelines), nor are pipelines whose elements share
// one payload. Numbers are their own references; other element types cannot
// be referenced (FAILED_PRECONDITION).
//
// Stats: the input's stages, then the interleave row: elements, bytes,
// input_wait (time blocked on an open pipeline or the input with nothing
// ready); extra
// "opened" (pipelines opened so far), "open" (open now). The open pipelines'
// own stages are not listed.
//
// Thread safety: as every stage (stage.h); `fn` is called from the consumer's
// thread.
#ifndef DATAECHO_INTERLEAVE_H_
#define DATAECHO_INTERLEAVE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/interleave_refs.h"
#include "dataecho/internal/interleave_state.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

// (Not formats/record_source.h's InterleaveOptions, the options of a record
// source's parallel file readers.)
template <typename T, typename U>
class InterleaveStage final : public UnaryStage<U, T> {
 public:
  using Fn = std::function<absl::StatusOr<StagePtr<U>>(T)>;

  // INVALID_ARGUMENT for a null input, an empty fn or a bad option.
  static absl::StatusOr<StagePtr<U>> Make(StagePtr<T> input, Fn fn,
                                          InterleaveStageOptions options) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options));
    if (!fn) return absl::InvalidArgumentError(internal::StrCat(options.name, ": empty fn"));
    return StagePtr<U>(new InterleaveStage(std::move(input), std::move(fn), std::move(options)));
  }

  absl::StatusOr<std::optional<U>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (!error_.ok()) return error_;
    absl::StatusOr<std::optional<U>> r = NextInCycle();
    if (!r.ok()) {
      error_ = r.status();
    } else if (r->has_value()) {
      totals_.elements.Add(1);
      totals_.bytes.Add(static_cast<int64_t>(ElementTraits<U>::ByteSize(**r)));
    }
    return r;
  }

  // References: the pipeline that made each element, then that pipeline's
  // references (see the file comment).
  absl::Status SaveRefs(std::span<const U* const> items, StateWriter& w) override {
    if constexpr (std::is_arithmetic_v<U>) {
      return Stage<U>::SaveRefs(items, w);
    } else if constexpr (!kReferenced) {
      (void)items;
      (void)w;
      return Refs::NotReferenced(options_.name, kWhyNot);
    } else {
      return refs_.Save(items, w, RefHooks());
    }
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<U>* out) override {
    if constexpr (std::is_arithmetic_v<U>) {
      return Stage<U>::Reread(r, n, out);
    } else if constexpr (!kReferenced) {
      (void)r;
      (void)n;
      (void)out;
      return Refs::NotReferenced(options_.name, kWhyNot);
    } else {
      return refs_.Reread(r, n, out, RefHooks(), [this] { return OpenPipelines(); });
    }
  }

 protected:
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    for (StagePtr<U>& s : cycle_) {
      if (s != nullptr) s->Cancel();
    }
  }

  StageStats OwnStats() const override {
    return totals_.Report(options_.name, {{"opened", static_cast<double>(opened_.Get())},
                                          {"open", static_cast<double>(open_.Get())}});
  }

 private:
  InterleaveStage(StagePtr<T> input, Fn fn, InterleaveStageOptions options)
      : UnaryStage<U, T>(std::move(input), Restarts::kWithInput),
        fn_(std::move(fn)),
        options_(std::move(options)) {}

  // tf.data's loop: read the current slot; at an empty slot open the next
  // input there (and read it at once); move on after a block or an end.
  // Slots past cycle_.size() are empty ones not made yet.
  absl::StatusOr<std::optional<U>> NextInCycle() {
    while (!input_done_ || open_.Get() > 0) {
      if (this->cancelled()) return CancelledError();
      if (index_ == cycle_.size()) {
        if (input_done_) {  // nothing left to open there: back to the first slot
          index_ = 0;
          continue;
        }
        absl::MutexLock lock(&mu_);
        cycle_.emplace_back();
      }
      StagePtr<U>& slot = cycle_[index_];
      if (slot != nullptr) {
        absl::StatusOr<std::optional<U>> r;
        totals_.input_wait_ns.Add(internal::PullTimed(*slot, &r));
        if (!r.ok()) return r;
        if (r->has_value()) {
          if constexpr (kReferenced) Remember(**r, slot_pipelines_[index_]);
          if (++in_block_ == options_.block_length) Advance();
          return r;
        }
        Replace(slot, nullptr);  // this pipeline ended
        Advance();
      } else if (!input_done_) {
        absl::StatusOr<std::optional<T>> next;
        totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &next));
        if (!next.ok()) return next.status();
        if (!next->has_value()) {
          input_done_ = true;
          continue;
        }
        if constexpr (kKeepsInputs) {
          slot_inputs_.resize(cycle_.size());
          slot_inputs_[index_] = **next;
          slot_pipelines_.resize(cycle_.size());
          slot_pipelines_[index_] = NewPipeline(**next);
        }
        absl::StatusOr<StagePtr<U>> opened = Open(*std::move(*next));
        if (!opened.ok()) return opened.status();
        Replace(slot, *std::move(opened));
        opened_.Add(1);
      } else {
        Advance();
      }
    }
    return std::nullopt;
  }

  // Input elements are kept (to open their pipelines again at restore) when
  // they can be copied.
  static constexpr bool kKeepsInputs = std::is_copy_constructible_v<T>;
  static constexpr std::string_view kWhyNot =
      kKeepsInputs ? "only records, examples and batches are traced to their pipelines"
                   : "its input's elements cannot be copied";

  // Closes every open pipeline and starts from the first slot.
  void CloseAll() {
    for (StagePtr<U>& slot : cycle_) Replace(slot, nullptr);
    {
      absl::MutexLock lock(&mu_);
      cycle_.clear();
    }
    slot_inputs_.clear();
    slot_pipelines_.clear();
    index_ = 0;
    in_block_ = 0;
    input_done_ = false;
  }

  // State (stage.h's shape): the input's, then this stage's section: the
  // cursor, the slots (open or not), the elements that opened the open ones,
  // and their pipelines' states.
  std::string StateName() const override { return options_.name; }
  absl::Status StickyError() const override { return error_; }
  // The input starts over as epoch `epoch` (stage.h); every open pipeline is closed.
  absl::Status OnRestart(uint32_t /*epoch*/) override {
    CloseAll();
    return absl::OkStatus();
  }
  uint64_t StateOptionsHash() const override {
    return OptionsHash().Add(options_.cycle_length).Add(options_.block_length).value();
  }
  absl::Status SaveOwn(StateWriter& w) override {
    if constexpr (!kKeepsInputs) {
      (void)w;
      return absl::FailedPreconditionError(internal::StrCat(
          options_.name, " cannot save its state: its input's elements cannot be copied"));
    } else {
      return SaveSlots(w);
    }
  }
  absl::Status RestoreOwn(StateReader& r) override {
    if constexpr (!kKeepsInputs) {
      (void)r;
      return this->CannotCheckpoint();
    } else {
      return RestoreSlots(r);
    }
  }
  absl::Status SaveSlots(StateWriter& w) {
    std::vector<bool> open(cycle_.size());
    std::vector<const T*> inputs;
    std::vector<Stage<U>*> pipelines;
    for (size_t i = 0; i < cycle_.size(); ++i) {
      if (!(open[i] = cycle_[i] != nullptr)) continue;
      if (i >= slot_inputs_.size() || !slot_inputs_[i].has_value()) {
        return absl::InternalError(internal::StrCat(options_.name, ": slot ", i, " has no input"));
      }
      inputs.push_back(&*slot_inputs_[i]);
      pipelines.push_back(cycle_[i].get());
    }
    return internal::SaveInterleaveSlots<T>(
        {index_, static_cast<uint64_t>(in_block_), input_done_}, open,
        std::span<const T* const>(inputs),
        [this](std::span<const T* const> items, StateWriter& w) {
          return internal::SaveOpeningElements<T>(this->input(), items, w);
        },
        std::span<Stage<U>* const>(pipelines), w);
  }
  // Reads the section, then opens each open slot's pipeline again with `fn`
  // and restores its state.
  absl::Status RestoreSlots(StateReader& r) {
    absl::StatusOr<internal::InterleaveSlots<T>> saved = internal::ReadInterleaveSlots<T>(
        r,
        {static_cast<uint64_t>(options_.cycle_length), static_cast<uint64_t>(options_.block_length),
         options_.name},
        [this](StateReader& r, size_t n, std::vector<T>* out) {
          return internal::RereadOpeningElements<T>(this->input(), r, n, out);
        });
    if (!saved.ok()) return saved.status();
    const size_t slots = saved->open.size();
    CloseAll();
    {
      absl::MutexLock lock(&mu_);
      cycle_.resize(slots);
    }
    slot_inputs_.resize(slots);
    slot_pipelines_.resize(slots);
    size_t next = 0;
    for (size_t i = 0; i < slots; ++i) {
      if (!saved->open[i]) continue;
      T& input = saved->inputs[next];
      slot_inputs_[i] = input;
      slot_pipelines_[i] = NewPipeline(input);
      absl::StatusOr<StagePtr<U>> opened = Open(std::move(input));
      if (!opened.ok()) return opened.status();
      absl::StatusOr<StateReader> inner = StateReader::Parse(saved->states[next++]);
      if (!inner.ok()) return inner.status();
      absl::Status s = (*opened)->RestoreState(*inner);
      if (s.ok()) s = inner->Finish();
      if (!s.ok()) {
        return absl::Status(s.code(), internal::StrCat(options_.name, ": the pipeline of slot ", i,
                                                       ": ", s.message()));
      }
      Replace(cycle_[i], *std::move(opened));
      opened_.Add(1);
    }
    index_ = static_cast<size_t>(saved->cursor.index);
    in_block_ = static_cast<int64_t>(saved->cursor.in_block);
    input_done_ = saved->cursor.input_done;
    return absl::OkStatus();
  }

  // fn's pipeline for `input`; INVALID_ARGUMENT if fn returned null.
  absl::StatusOr<StagePtr<U>> Open(T input) {
    absl::StatusOr<StagePtr<U>> opened = fn_(std::move(input));
    if (opened.ok() && *opened == nullptr) {
      opened = absl::InvalidArgumentError(options_.name + ": fn returned a null stage");
    }
    return opened;
  }

  // References (internal/interleave_refs.h).
  using Refs = internal::InterleaveRefs<T, U>;
  static constexpr bool kReferenced = Refs::kEnabled;

  std::vector<uint64_t> OpenPipelines() const {
    std::vector<uint64_t> out;
    for (size_t i = 0; i < cycle_.size() && i < slot_pipelines_.size(); ++i) {
      if (cycle_[i] != nullptr) out.push_back(slot_pipelines_[i]);
    }
    return out;
  }
  void Remember(const U& v, uint64_t pipeline) {
    refs_.Remember(v, pipeline, [this] { return OpenPipelines(); });
  }
  typename Refs::Hooks RefHooks() {
    return {.name = options_.name,
            .open_pipeline = [this](uint64_t number) -> Stage<U>* {
              for (size_t i = 0; i < cycle_.size() && i < slot_pipelines_.size(); ++i) {
                if (cycle_[i] != nullptr && slot_pipelines_[i] == number) return cycle_[i].get();
              }
              return nullptr;
            },
            .make = [this](const T& input) { return Open(T(input)); },
            .save_inputs =
                [this](std::span<const T* const> items, StateWriter& w) {
                  return internal::SaveOpeningElements<T>(this->input(), items, w);
                },
            .reread_inputs =
                [this](StateReader& r, size_t n, std::vector<T>* out) {
                  return internal::RereadOpeningElements<T>(this->input(), r, n, out);
                }};
  }
  uint64_t NewPipeline(const T& input) { return refs_.NewPipeline(input); }

  void Advance() {
    in_block_ = 0;
    if (++index_ == static_cast<uint64_t>(options_.cycle_length)) index_ = 0;
  }

  // Swaps a slot's pipeline under mu_ (Cancel() walks the slots from other
  // threads) and counts the open ones.
  void Replace(StagePtr<U>& slot, StagePtr<U> stage) {
    StagePtr<U> old;
    {
      absl::MutexLock lock(&mu_);
      open_.Add((stage != nullptr ? 1 : 0) - (slot != nullptr ? 1 : 0));
      old = std::exchange(slot, std::move(stage));
      if (slot != nullptr && this->cancelled()) slot->Cancel();  // raced with Cancel()
    }
    // `old` (an ended pipeline) is destroyed here, outside the lock.
  }

  Fn fn_;
  const InterleaveStageOptions options_;
  absl::Mutex mu_;
  // The open pipelines (at most cycle_length slots, made as inputs open).
  // Written by the consumer thread under mu_, read by it without the lock;
  // Cancel() reads them under mu_.
  std::vector<StagePtr<U>> cycle_;
  // The element that opened each slot's pipeline (kKeepsInputs; consumer thread only).
  std::vector<std::optional<std::conditional_t<kKeepsInputs, T, int>>> slot_inputs_;
  // The number of each slot's pipeline (kKeepsInputs; consumer thread only).
  std::vector<uint64_t> slot_pipelines_;
  Refs refs_;                // consumer thread only
  size_t index_ = 0;         // consumer thread only
  int64_t in_block_ = 0;     // consumer thread only
  bool input_done_ = false;  // consumer thread only
  absl::Status error_;       // sticky (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter opened_, open_;
};

}  // namespace dataecho

#endif  // DATAECHO_INTERLEAVE_H_
