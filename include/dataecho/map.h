// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// map.h: apply a function to every element, inline or in parallel.
//
// By default (`parallelism = 0`) Map calls `fn` in the consumer's thread:
// right for cheap functions (crop, flip, a cast), for which moving an element
// to another thread and back would cost more than the call. `parallelism = n`
// runs `fn` on a fixed pool of n worker threads, at most n calls in flight,
// and returns results in input order (set `deterministic = false` to take them
// in completion order): for expensive functions (decoding). `parallelism =
// kAutotune` starts inline, measures fn, and then stays inline, picks the
// workers from the measured time and the cores left, or, for a fn far costlier
// than a hand-off (decoding), takes a worker per core (internal/map_tuning.h).
// With `parallelism_control` (map_parallelism.h) the workers can be raised
// while the Map runs (EchoedBatches' auto placement raises a decode Map's).
// `fn` returns the new element or an error; an error comes out at the
// element's position (in order: every earlier element first) and then stays.
//
//   auto decoded = dataecho::MapStage<Record, Example>::Make(
//       std::move(records), DecodeImageRecord, {.parallelism = 4});
//   if (!decoded.ok()) return decoded.status();  // a bad option, empty fn or null input
//
// A parallel Map's results run ahead of the consumer (up to `buffer` beyond
// the calls in flight; by default three batches per worker). Workers take their
// input in batches (one worker pulls at a time, never concurrently) and hand
// results over in batches, a batch being about 200 us of work (one element for
// expensive functions); a thread is woken only when it sleeps waiting for what
// just happened. Workers start on the first Next(). Destruction cancels,
// wakes and joins them; a call of `fn` already running is waited for.
//
// Epochs (stage.h): a Map starts over with its input under a Repeat, inline
// or parallel; a parallel one first lets its workers finish the calls in
// flight and drops their results (the epoch is over), then starts them anew
// on the next Next().
//
// Checkpoints (stage.h, docs/checkpoint.md). `fn` must be deterministic per
// element (the seeded augmenters are): a restore applies it again.
//  - State: an inline Map has none of its own; a parallel one stores no
//    results. Its workers keep a snapshot of the input's state taken after j
//    pulls (internal/input_snapshots.h); SaveState() writes the newest one
//    the consumer has passed and the count c - j of results it took since,
//    and a restore pulls those c - j inputs again and drops them (fn is not
//    applied). deterministic = false cannot be saved (FAILED_PRECONDITION:
//    its results come in completion order).
//  - References (a Shuffle or Echo after the Map holding its elements): the
//    Map references its input's elements and applies fn again on Reread().
//    Map<T, T> passes its elements to its input as they are, so fn must keep
//    source_index, repeat_index and epoch (and a Record's offset and crc32c);
//    Map<Record, Example> sets the Example's source_index, repeat_index and
//    epoch from the record, and its provenance fields (record_offset,
//    record_crc32c: example.h) after fn returns, and references the record
//    by them. A Map to numbers writes their values (a number is its own
//    reference); other type pairs cannot be referenced (FAILED_PRECONDITION).
//
// Stats (stats.h): input_wait = time blocked on an input that had nothing
// ready (the workers', or the consumer's when inline); consumer_wait =
// consumer time waiting for the next result; threads = the workers (0 =
// inline); extra "busy_s" = time in fn (inline too, summed over workers),
// "parallelism" = the workers (0 = inline; with kAutotune, the choice once
// made; with parallelism_control, the workers now).
//
// Thread safety: as every stage (stage.h); `fn` must be safe to call from
// several threads at once when parallelism is not 0.
#ifndef DATAECHO_MAP_H_
#define DATAECHO_MAP_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/internal/map_refs.h"
#include "dataecho/internal/map_tuning.h"
#include "dataecho/internal/map_workers.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/map_options.h"
#include "dataecho/map_parallelism.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename In, typename Out>
class MapStage final : public UnaryStage<Out, In> {
 public:
  using Fn = MapFn<In, Out>;

  // (Defined below the class, not inline: where the MapStage is one the
  // library compiles, a program calls it instead of compiling the stage.)
  static absl::StatusOr<StagePtr<Out>> Make(StagePtr<In> input, Fn fn, MapOptions options = {});

  ~MapStage() override {
    if (options_.parallelism_control) options_.parallelism_control->Attach(nullptr);
    this->Cancel();
    pool_.Join();
  }

  absl::StatusOr<std::optional<Out>> Next() override {
    if (options_.parallelism_control) FollowControl();
    if (parallelism_ <= 0) return NextInline();
    pool_.Start(parallelism_);
    return pool_.Next();
  }

  // Epochs (stage.h): inline or parallel, the Map starts over with its input.

  // References (see the file comment): the input's, under the pull lock
  // (internal/map_refs.h).
  absl::Status SaveRefs(std::span<const Out* const> items, StateWriter& w) override {
    if constexpr (Refs::kViaInput) {
      return Refs::SaveRefs(this->input(), pool_.input_mu(), items, w);
    } else {
      return Stage<Out>::SaveRefs(items, w);  // numbers: their values; else FAILED_PRECONDITION
    }
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<Out>* out) override {
    if constexpr (Refs::kViaInput) {
      return Refs::Reread(this->input(), pool_.input_mu(), fn_, r, n, out);
    } else {
      return Stage<Out>::Reread(r, n, out);
    }
  }

  bool TryNext(absl::StatusOr<std::optional<Out>>* out) override {
    if (options_.parallelism_control) FollowControl();
    if (parallelism_ <= 0) {
      internal::AssignInPlace(out, [&] { return NextInline(); });
      return true;
    }
    pool_.Start(parallelism_);
    return pool_.TryNext(out);
  }

 protected:
  void OnCancel() override { pool_.Cancel(); }
  // Restarts with its input (stage.h): running workers stop first.
  absl::Status StickyError() const override { return inline_status_; }
  absl::Status BeforeRestart() override {
    if (parallelism_ <= 0 || !pool_.running()) return pool_.StickyError();
    return pool_.Stop();
  }

  std::string StateName() const override { return options_.name; }
  // The input's state: inline (or before the workers start) the input's
  // own; with workers, the newest snapshot the consumer has passed, and the
  // results taken since (SaveOwn).
  absl::Status SaveInput(StateWriter& w) override {
    if (!options_.deterministic && (options_.parallelism != 0 || parallelism_ != 0)) {
      return absl::FailedPreconditionError(internal::StrCat(
          options_.name,
          " (deterministic = false) cannot save its state: results in completion order"));
    }
    return pool_.SaveInput(w);
  }
  absl::Status SaveOwn(StateWriter& w) override { return pool_.SaveOwn(w); }
  // Pulls again the inputs of the results taken after the snapshot, and
  // drops them (fn is not applied).
  absl::Status RestoreOwn(StateReader& r) override { return pool_.RestoreOwn(r); }

  StageStats OwnStats() const override {
    const int threads = static_cast<int>(reported_parallelism_.Get());
    return totals_.Report(
        options_.name, threads,
        {{"parallelism", threads}, {"busy_s", static_cast<double>(busy_ns_.Get()) * 1e-9}});
  }

 private:
  using Refs = internal::MapRefs<In, Out>;
  // fn, and what a checkpoint needs of its result (see the file comment).
  absl::StatusOr<Out> Apply(In in) const { return Refs::Apply(fn_, std::move(in)); }

  MapStage(StagePtr<In> input, Fn fn, MapOptions options)
      : UnaryStage<Out, In>(std::move(input), Restarts::kWithInput),
        fn_(std::move(fn)),
        options_(std::move(options)),
        parallelism_(options_.parallelism),
        pool_(this->input(), fn_, options_.name, options_.deterministic, options_.buffer, totals_,
              busy_ns_) {
    reported_parallelism_.Set(parallelism_ > 0 ? parallelism_ : 0);
    if (options_.parallelism_control) {
      options_.parallelism_control->Attach([this] {
        MapParallelism::Reading r;
        r.name = options_.name;
        r.workers = static_cast<int>(reported_parallelism_.Get());
        r.elements = totals_.elements.Get();
        r.bytes = totals_.bytes.Get();
        r.busy_ns = busy_ns_.Get();
        r.consumer_wait_ns = totals_.consumer_wait_ns.Get();
        r.input_wait_ns = totals_.input_wait_ns.Get();
        return r;
      });
    }
  }

  // More workers if parallelism_control asks for them (not while a kAutotune
  // Map measures, nor after an inline error): an inline Map becomes a
  // parallel one, whose pool takes its input from here on.
  void FollowControl() {
    const int want = options_.parallelism_control->requested();
    if (want <= parallelism_ || parallelism_ == kAutotune || !inline_status_.ok()) return;
    parallelism_ = want;
    reported_parallelism_.Set(want);
    pool_.Grow(want);
  }

  // ---- inline (parallelism 0, and kAutotune while it measures) ----

  absl::StatusOr<std::optional<Out>> NextInline() {
    if (this->cancelled()) return CancelledError();
    if (!inline_status_.ok()) return inline_status_;
    const bool tuning = parallelism_ == kAutotune;
    if (tuning) tuner_.Enter();
    absl::StatusOr<std::optional<In>> in;
    totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &in));  // only real waits
    if (!in.ok()) return inline_status_ = in.status();
    if (!in->has_value()) return std::nullopt;
    const int64_t t0 = internal::NowNanos();
    absl::StatusOr<Out> out = Apply(std::move(**in));
    const int64_t busy = internal::NowNanos() - t0;
    busy_ns_.Add(busy);
    if (!out.ok()) return inline_status_ = out.status();
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<Out>::ByteSize(*out)));
    if (tuning && tuner_.Leave(busy)) {  // measured enough: from the next call on
      parallelism_ = tuner_.choice();
      reported_parallelism_.Set(parallelism_);
    }
    return std::optional<Out>(std::move(*out));
  }

  const Fn fn_;
  const MapOptions options_;
  int parallelism_;               // consumer thread only: 0 inline, kAutotune measuring, n workers
  internal::MapAutotuner tuner_;  // consumer thread only
  absl::Status inline_status_;    // inline: sticky error (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;  // one writer each (input_wait: the pull lock)
  internal::SharedCounter busy_ns_;
  internal::Counter reported_parallelism_;
  // ---- parallel (internal/map_workers.h): the workers and their results ----
  internal::MapWorkers<In, Out> pool_;
};

template <typename In, typename Out>
absl::StatusOr<StagePtr<Out>> MapStage<In, Out>::Make(StagePtr<In> input, Fn fn,
                                                      MapOptions options) {
  DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
  DATAECHO_RETURN_IF_ERROR(options.Validate());
  if (!fn) return absl::InvalidArgumentError(internal::StrCat(options.name, ": empty fn"));
  return StagePtr<Out>(new MapStage(std::move(input), std::move(fn), std::move(options)));
}

// MapStage for the library's element types are compiled once, in
// src/map.cc: programs link them instead of compiling them again. Other
// types are instantiated where they are used, as usual.
extern template class DATAECHO_EXPORT MapStage<Record, Example>;
extern template class DATAECHO_EXPORT MapStage<Example, Example>;
extern template class DATAECHO_EXPORT MapStage<Batch, Batch>;
extern template class DATAECHO_EXPORT MapStage<Record, Record>;

}  // namespace dataecho

#endif  // DATAECHO_MAP_H_
