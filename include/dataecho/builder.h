// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// builder.h: the fluent, typed pipeline builder.
//
// A Pipeline<T> owns a chain of stages ending in elements of type T. Each
// builder call consumes the pipeline and returns a longer one; the element
// type flows through Map's return type. Each call runs the stage's factory
// (stage.h); an invalid option anywhere makes the whole pipeline hold the
// factory's INVALID_ARGUMENT, and every later call passes it on: status()
// reports it and Next() returns it.
//
//   auto pipeline = dataecho::From(dataecho::MakeTFRecordSource(store, shards))
//       .Throttle({.latency = absl::Milliseconds(1)})        // a slow upstream
//       .Map(Decode, {.parallelism = 4})                      // parallel, in order
//       .Prefetch({.depth = 64})                              // upstream runs ahead
//       .Echo({.factor = 2.0, .seed = 1})                     // example echoing
//       .Map(RandomCropAndFlip)                               // new crops; cheap: inline
//       .Shuffle({.buffer_size = 10000, .seed = 2})           // spread the copies
//       .Batch({.batch_size = 256, .cast = dataecho::DType::kFloat16})
//       .Prefetch({.depth = 2});
//   if (!pipeline.status().ok()) return pipeline.status();
//   while (true) {
//     auto batch = pipeline.Next();
//     if (!batch.ok()) return batch.status();
//     if (!batch->has_value()) break;
//     Train(**batch);
//   }
//   std::cout << dataecho::FormatStatsTable(pipeline.Stats());
//
// Or, with the error kept for after the loop (pipeline_iterator.h):
//
//   for (dataecho::Batch& batch : pipeline) Train(batch);
//   if (!pipeline.status().ok()) return pipeline.status();
//
// More steps: `.Filter(pred)`, `.Take(n)`, `.Cache({.max_bytes = ...})` (read
// once, replay in later epochs), `.Zip(other)`, `.Interleave(fn, {...})`
// (round-robin over pipelines made from each element) and
// `.PaddedBatch({...})` for components of varying shape, `.Unbatch()` for a
// batch's rows one at a time (filter.h, source.h, cache.h, zip.h,
// interleave.h, padded_batch.h, unbatch.h; docs/builder.md), and
// `dataecho::Mix(pipelines, {.weights = {...}})` to mix pipelines with
// weights (make_pipeline.h, mix.h, docs/mix.md).
//
// Batch echoing is `.Batch(...).Echo(...)`. `.AdaptiveEcho(...)` repeats only
// while the upstream has nothing ready; `.AutoEcho(...)` picks a fixed factor
// from a warm-up measurement. To build everything after the decoded
// upstream's Prefetch with echo at a placement chosen at run time (a flag),
// use EchoedBatches (echo_placement.h). For a stage of your own (stage_kit.h,
// docs/writing_stages.md), pass a factory to Apply():
// `.Apply([](dataecho::StagePtr<T> in) { return MyStage::Make(std::move(in)); })`.
//
// Checkpoints (checkpoint.h, docs/checkpoint.md): SaveState() returns the
// state as a string; SaveStateCord() returns the same bytes as an absl::Cord
// that shares the snapshot the last Prefetch's producer sealed instead of
// copying it: the one to call when saving after every step. Either restores:
//
//   absl::StatusOr<absl::Cord> state = pipeline.SaveStateCord();  // no copy
//   if (!state.ok()) return state.status();
//   WriteChunks(*state);   // e.g. `for (std::string_view c : state->Chunks())`
//   ...
//   absl::Status s = again.RestoreState(*state);   // or its flattened bytes
//
// Which header: this one declares the builder and takes every stage's options
// (map_options.h, stage_options.h, echo_options.h, batch_options.h) without the
// stages' definitions (a stage between fixed element types whose header only
// declares it, Unbatch, comes in whole: unbatch.h): the library compiles the
// stages of pipelines of Record, Example and Batch (and Map from Record to
// Example or Record, from Example to Example, from Batch to Batch), and a
// program that builds only those links them, which keeps its compile time near
// that of Abseil's and the standard library's headers alone
// (docs/benchmarks.md, "Build time"). Pipelines of other element types (your
// own, numbers, Zip's pairs), Map between other types, Zip, Interleave, and the
// free functions FromVector(), Mix(), ... need dataecho/pipeline.h, which adds
// every stage's definition (the umbrella dataecho/dataecho.h includes it).
// Without it such a call stops the compile with a message that says so.
//
// Thread safety: as for a stage (stage.h): one consumer thread calls Next();
// Cancel() and Stats() from any thread.
#ifndef DATAECHO_BUILDER_H_
#define DATAECHO_BUILDER_H_

#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "dataecho/batch_options.h"
#include "dataecho/checkpoint.h"
#include "dataecho/echo_options.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/consumer_meter.h"
#include "dataecho/internal/pipeline_traits.h"
#include "dataecho/internal/stage_factories.h"
#include "dataecho/loss_feedback.h"
#include "dataecho/map_options.h"
#include "dataecho/pipeline_iterator.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/stats.h"
#include "dataecho/unbatch.h"

namespace dataecho {

template <typename T>
class Pipeline {
 public:
  using value_type = T;
  static_assert(internal::StagesDefined<T>());

  // (Constructors, destructor and moves are defined out of the class, like
  // the builder's non-template members: a program of the library's element
  // types calls the library's instead of compiling them; internal/
  // pipeline_members.h.)
  explicit Pipeline(StagePtr<T> stage);
  explicit Pipeline(absl::Status error);
  Pipeline(absl::StatusOr<StagePtr<T>> stage);  // NOLINT: implicit on purpose

  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  // OK, the first invalid option met while building, or the first error
  // Next() returned (so a range-for loop, which ends at an error, keeps it).
  const absl::Status& status() const { return status_; }

  // Applies `fn` to every element; fn returns U or absl::StatusOr<U>.
  template <typename F>
  auto Map(F fn, MapOptions options = {}) && {
    using R = std::invoke_result_t<F&, T>;
    using U = typename internal::UnwrapStatusOr<std::decay_t<R>>::type;
    if (!status_.ok()) return Pipeline<U>(status_);
    static_assert(internal::StagesDefined<T, U>());
    MapFn<T, U> wrapped;
    if constexpr (internal::UnwrapStatusOr<std::decay_t<R>>::kIsStatusOr) {
      wrapped = std::move(fn);
    } else {
      wrapped = [fn = std::move(fn)](T x) mutable -> absl::StatusOr<U> { return fn(std::move(x)); };
    }
    return Pipeline<U>(internal::MapFactory<T, U>::Make(std::move(stage_), std::move(wrapped),
                                                        std::move(options)));
  }

  Pipeline Prefetch(PrefetchOptions options = {}) &&;
  Pipeline Echo(EchoOptions options) &&;
  // Echo only while the upstream has nothing ready (adaptive_echo.h).
  Pipeline AdaptiveEcho(AdaptiveEchoOptions options) &&;
  // Fixed echo with the factor measured during a warm-up (auto_echo.h).
  Pipeline AutoEcho(AutoEchoOptions options) &&;
  Pipeline Shuffle(ShuffleOptions options) &&;
  Pipeline Throttle(ThrottleOptions options) &&;
  Pipeline Take(int64_t n) &&;

  // --- Epochs (repeat.h) ---
  // Runs the pipeline built so far `epochs` times (forever if -1), numbering
  // the passes: elements carry their epoch, and seeded stages (augmenters,
  // Echo, Shuffle) and record sources (file order) give each epoch its own
  // randomness. Every stage below must be able to start over
  // (Stage::Restart); put it right after the source, or after a Shuffle for
  // a new order each epoch: `.Shuffle({...}).Repeat(-1).Map(Decode)...`.
  Pipeline Repeat(int64_t epochs = -1, std::string name = "repeat") &&;
  // --- end of epochs ---

  // Examples to fused batches (batch.h). (A template of its own, like
  // PaddedBatch(), so that instantiating Pipeline<Record> explicitly leaves it
  // out: clang 14 instantiates a constrained member regardless. Its result's
  // type is named through E, internal::BatchOf.)
  template <typename E = T>
  requires std::same_as<E, Example> Pipeline<typename internal::BatchOf<E>::type> Batch(
      BatchOptions options) && {
    return Batches<E>(&internal::MakeBatchStage, std::move(options));
  }

  // Batches back to one Example per row, each with its row's label, source
  // and repeat index and the batch's epoch (unbatch.h). (Its return type is
  // deduced so that Pipeline<Example> is not instantiated here, before its
  // extern declaration below.)
  template <typename B = T>
  requires std::same_as<B, ::dataecho::Batch>
  auto Unbatch(UnbatchOptions options = {}) && {
    if (!status_.ok()) return Pipeline<Example>(status_);
    return Pipeline<Example>(UnbatchStage::Make(std::move(stage_), std::move(options)));
  }

  // --- Filter, Cache, Zip, Interleave, PaddedBatch, range-for ---
  // Keeps the elements for which pred(const T&) returns true (or an OK true:
  // pred may return absl::StatusOr<bool>) (filter.h).
  template <typename F>
  Pipeline Filter(F pred, FilterOptions options = {}) && {
    FilterPredicate<T> wrapped;
    if constexpr (std::is_same_v<std::decay_t<std::invoke_result_t<F&, const T&>>, bool>) {
      wrapped = [pred = std::move(pred)](const T& x) mutable -> absl::StatusOr<bool> {
        return pred(x);
      };
    } else {
      wrapped = std::move(pred);
    }
    return Then<internal::FilterFactory<T>>(std::move(wrapped), std::move(options));
  }
  // Reads the input once; later epochs (a Repeat above) replay it from
  // memory, up to max_bytes (cache.h).
  Pipeline Cache(CacheOptions options = {}) &&;
  // Pairs of (this element, other's element) until either ends (zip.h).
  template <typename U>
  Pipeline<std::pair<T, U>> Zip(Pipeline<U> other, ZipOptions options = {}) && {
    static_assert(internal::StagesDefined<std::pair<T, U>>());
    if (!status_.ok()) return Pipeline<std::pair<T, U>>(status_);
    absl::StatusOr<StagePtr<U>> second = std::move(other).Release();
    if (!second.ok()) return Pipeline<std::pair<T, U>>(second.status());
    return Pipeline<std::pair<T, U>>(
        internal::MakeZipStage<T, U>(std::move(stage_), *std::move(second), std::move(options)));
  }
  // fn(T) returns a Pipeline<U> (or a StagePtr<U>, or a factory's
  // absl::StatusOr<StagePtr<U>>); cycle_length of them are read round-robin,
  // block_length elements at a time (interleave.h).
  template <typename F>
  auto Interleave(F fn, InterleaveStageOptions options = {}) && {
    using R = std::decay_t<std::invoke_result_t<F&, T>>;
    using U = typename internal::AsStage<R>::type;
    static_assert(internal::StagesDefined<T, U, void>());  // needs pipeline.h
    if (!status_.ok()) return Pipeline<U>(status_);
    internal::InterleaveFn<T, U> wrapped =
        [fn = std::move(fn)](T x) mutable -> absl::StatusOr<StagePtr<U>> {
      return internal::AsStage<R>::Convert(fn(std::move(x)));
    };
    return Pipeline<U>(internal::MakeInterleaveStage<T, U>(std::move(stage_), std::move(wrapped),
                                                           std::move(options)));
  }
  // Examples whose components vary in shape to padded Batches with masks and
  // lengths (padded_batch.h).
  template <typename E = T>
  requires std::same_as<E, Example> Pipeline<typename internal::BatchOf<E>::type> PaddedBatch(
      PaddedBatchOptions options) && {
    return Batches<E>(&internal::MakePaddedBatchStage, std::move(options));
  }
  // `for (T& x : pipeline)`: the elements until the end or the first error,
  // which status() then holds (pipeline_iterator.h).
  PipelineIterator<Pipeline> begin() { return PipelineIterator<Pipeline>(this); }
  std::default_sentinel_t end() { return std::default_sentinel; }
  // --- end of Filter, Cache, Zip, Interleave, PaddedBatch, range-for ---

  // Appends a stage made by `factory(StagePtr<T>)`, which returns StagePtr<U>
  // or absl::StatusOr<StagePtr<U>>.
  template <typename F>
  auto Apply(F factory) && {
    using R = std::decay_t<std::invoke_result_t<F&, StagePtr<T>>>;
    using P = typename internal::UnwrapStatusOr<R>::type;
    using U = typename P::element_type::value_type;
    if (!status_.ok()) return Pipeline<U>(status_);
    return Pipeline<U>(factory(std::move(stage_)));
  }

  // The next element, std::nullopt at the end, or an error (see stage.h).
  absl::StatusOr<std::optional<T>> Next();

  // Thread-safe: blocked and later Next() calls return CANCELLED.
  void Cancel() {
    if (stage_ != nullptr) stage_->Cancel();
  }

  // --- Loss feedback (loss_feedback.h) ---
  // Tells this pipeline's echo planner (EchoedBatches with placement auto or
  // adaptive, echo_placement.h) the loss of `batch`, one this pipeline
  // returned, from the forward pass before its update: per row
  // (row_losses[i]: row i; RowLosses) or the batch's mean, so that it learns
  // what a copy is worth on this model (echo_planner.h). Thread-safe. The
  // pipeline's error if it has one, else as dataecho::ReportLoss().
  template <typename B = T, RowLosses L>
  requires std::same_as<B, ::dataecho::Batch> absl::Status ReportLoss(const B& batch,
                                                                      const L& row_losses) {
    return status_.ok() ? ::dataecho::ReportLoss(loss_feedback().get(), batch, row_losses)
                        : status_;
  }
  template <typename B = T>
  requires std::same_as<B, ::dataecho::Batch> absl::Status ReportLoss(const B& batch,
                                                                      double mean_loss) {
    return status_.ok() ? ::dataecho::ReportLoss(loss_feedback().get(), batch, mean_loss) : status_;
  }
  // The loss feedback ReportLoss() reports to (null: none), e.g. for a
  // trainer that reports from another thread than the one that pulls.
  std::shared_ptr<LossFeedback> loss_feedback() const {
    return stage_ == nullptr ? nullptr : stage_->loss_feedback();
  }
  // --- end of loss feedback ---

  // Every stage's statistics, source first; stages of the same name are
  // told apart as "map", "map#2", ... (or give them names in their options).
  std::vector<StageStats> Stats() const;

  // The pipeline's position as a few bytes (checkpoint.h, docs/checkpoint.md):
  // between two Next() calls. FAILED_PRECONDITION naming a stage that cannot
  // save its state; the pipeline's error if it has one.
  absl::StatusOr<std::string> SaveState();
  // The same state as SaveState(), as a Cord whose big chunk is the newest
  // snapshot the last Prefetch's producer sealed (shared by reference count,
  // not copied; StateWriter::FinishCord). Flattened, its bytes are
  // SaveState()'s: write its chunks to a file as they are, and restore it
  // with RestoreState(cord) or RestoreState(the bytes read back). What
  // saving after every step should call: it allocates and copies only the
  // few bytes around the snapshot. The Cord keeps the snapshot alive (it is
  // immutable; the producer seals new ones into new blocks).
  absl::StatusOr<absl::Cord> SaveStateCord();
  // Puts a freshly built pipeline of the same shape where the saved one was:
  // it then yields exactly what that one would have yielded next. Before the
  // first Next(). INVALID_ARGUMENT for a state of another shape (naming the
  // first stage that differs), DATA_LOSS for a truncated or corrupted one;
  // the pipeline is unchanged by those. An error while restoring the stages
  // (e.g. a file that cannot be read again) becomes the pipeline's error.
  absl::Status RestoreState(std::string_view state);
  // RestoreState() for a state whose chain is followed by one section of the
  // consumer's own, named `section` (not empty): what a hand-off that pulls elements
  // ahead of its consumer writes after the chain's state (the Python module's
  // references to them). Once the chain is restored, `read(last stage, r)`
  // reads that section; its error is the pipeline's, as a stage's would be.
  absl::Status RestoreStateWith(std::string_view state, std::string_view section,
                                absl::FunctionRef<absl::Status(Stage<T>&, StateReader&)> read) {
    return Restore(StateReader::Parse(state), section, read);
  }
  // The same for a state held as a Cord (SaveStateCord()). (A template so
  // that a std::string or a string literal still picks the overload above.)
  template <typename C>
  requires std::same_as<C, absl::Cord> absl::Status RestoreState(const C& state) {
    return Restore(StateReader::Parse(state));
  }

  // The last stage, owning the whole chain, or the build error.
  absl::StatusOr<StagePtr<T>> Release() && {
    if (!status_.ok()) return status_;
    return std::move(stage_);
  }

 private:
  // This pipeline with the stage Stage::Make(its last stage, args...) on top.
  template <typename Stage, typename... Args>
  Pipeline Then(Args&&... args) {
    if (!status_.ok()) return Pipeline(status_);
    return Pipeline(Stage::Make(std::move(stage_), std::forward<Args>(args)...));
  }

  // The pipeline of batches make(its last stage, options) returns (Batch(),
  // PaddedBatch()); named through E (internal::BatchOf).
  template <typename E, typename Make, typename Options>
  Pipeline<typename internal::BatchOf<E>::type> Batches(Make make, Options options) {
    using P = Pipeline<typename internal::BatchOf<E>::type>;
    if (!status_.ok()) return P(status_);
    return P(make(std::move(stage_), std::move(options)));
  }

  // Restores the chain, then reads `section` with `read` if it is named
  // (RestoreState() names none: `read` is then NoSection, never called).
  static absl::Status NoSection(Stage<T>&, StateReader&) { return absl::OkStatus(); }
  absl::Status Restore(absl::StatusOr<StateReader> parsed, std::string_view section = {},
                       absl::FunctionRef<absl::Status(Stage<T>&, StateReader&)> read = NoSection);

  // Next() once status_ is OK. Its one return is of one named value, which
  // the compiler then builds in the caller's (g++ 12 moves it, a move and a
  // destruction of the element, if another return gives something else).
  absl::StatusOr<std::optional<T>> PullFromStage();

  absl::Status status_;
  StagePtr<T> stage_;
  // The consumer's pulls (stats.h, "THE CONSUMER"): every pull of a batch
  // pipeline is timed, every 16th of others.
  std::shared_ptr<internal::ConsumerMeter> consumer_ =
      std::make_shared<internal::ConsumerMeter>(std::is_same_v<T, ::dataecho::Batch> ? 1 : 16);
};

}  // namespace dataecho

namespace dataecho {

// Pipeline of records, of examples and of batches is compiled once, in
// src/pipeline.cc: programs link it instead of compiling it again (and the
// stages its members make). Other types are instantiated where they are
// used (pipeline.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(Pipeline);

// A pipeline from its first stage: a source, e.g.
// `From(MakeTFRecordSource(store, uris))` (formats/tfrecord.h).
template <typename T>
Pipeline<T> From(StagePtr<T> stage) {
  return Pipeline<T>(std::move(stage));
}
// From a stage factory's result (absl::StatusOr<StagePtr<T>>): its error
// becomes the pipeline's. (A template over the whole type, so that
// `From<T>(std::make_unique<MyStage>(...))` still picks the overload above.)
template <typename S, typename T = typename S::value_type::element_type::value_type>
Pipeline<T> From(S stage) requires std::same_as<S, absl::StatusOr<StagePtr<T>>> {
  return Pipeline<T>(std::move(stage));
}

}  // namespace dataecho

#endif  // DATAECHO_BUILDER_H_
