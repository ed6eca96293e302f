// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// stage.h: the stage contract every pipeline stage implements.
//
// A stage is a pull iterator. `Next()` blocks until it can return the next
// element, end-of-stream (an empty optional: never an error code), or an
// error. Errors arrive in order: every element produced before an error is
// returned first. After an error or end-of-stream a stage keeps returning it
// (errors are sticky).
//
//   std::unique_ptr<dataecho::Stage<Example>> s = ...;
//   while (true) {
//     absl::StatusOr<std::optional<Example>> next = s->Next();
//     if (!next.ok()) return next.status();   // error, in order
//     if (!next->has_value()) break;          // end of stream
//     Use(**next);
//   }
//
// A stage owns its input stage. `Cancel()` may be called from any thread at
// any time: blocked and later Next() calls return CANCELLED promptly, and the
// request propagates to the inputs. Destroying a stage (which cancels and
// joins any threads it runs) is always prompt, even while its threads are
// blocked on a full queue, an empty queue or a stalled transfer.
//
// Stages are made by factories, never by constructors: each stage class has
// `static absl::StatusOr<StagePtr<T>> Make(input, options)` (sources have a
// free function of the same shape, e.g. RangeSource), which checks its options
// and input and returns INVALID_ARGUMENT naming the bad one; nothing is
// silently clamped. The builder in pipeline.h turns a failed factory into the
// pipeline's error.
//
// EPOCHS. A Repeat stage (repeat.h) runs its input more than once: when the
// input returned end of stream it calls `Restart(e)`, and the input starts
// over as epoch e (the whole chain below it does: each stage restarts its
// input first). Seeded stages fold e into their seeds (Shuffle's order,
// Echo's draws), record sources read their files in a new order for e > 0,
// and sources stamp e on their elements; statistics keep accumulating. A
// stage that cannot start over (one running a user's generator, for example)
// keeps the default, which returns UNIMPLEMENTED; Repeat asks
// `EnableRestart()` when it is made, so such a pipeline fails when it is
// built, not after its first epoch.
//
// CHECKPOINTS (checkpoint.h, docs/checkpoint.md). SaveState() writes the
// chain's position, the input's part first; RestoreState() reads it back into
// a fresh chain of the same shape, before its first Next(). A stage that
// buffers elements writes references to them (its input's SaveRefs()) and has
// them made again at restore (its input's Reread()). The defaults fail with
// FAILED_PRECONDITION naming the stage (arithmetic elements are their own
// reference); a stage that can never be saved (a generator's hidden state)
// returns UNIMPLEMENTED naming it. Unary stages share one shape (UnaryStage:
// the input's part, then SaveOwn/RestoreOwn), and stages that pass elements
// on unchanged derive from PassThroughStage.
//
// A STAGE OF YOUR OWN: derive from UnaryStage or PassThroughStage, check the
// input with CheckInput() in its factory, pull with PullTimed(), count with
// StageTotals (stage_kit.h, which includes this header), and add it to a
// pipeline with Pipeline::Apply() (docs/writing_stages.md).
//
// Thread safety: Next(), EnableRestart(), Restart() and the checkpoint calls
// are made by one consumer thread at a time; Cancel() and AppendStats() are
// thread-safe.
#ifndef DATAECHO_STAGE_H_
#define DATAECHO_STAGE_H_

#include <atomic>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dataecho/checkpoint.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/record.h"
#include "dataecho/stats.h"
#include "dataecho/trace.h"

namespace dataecho {

namespace internal {
// `*out = make()`, with make()'s result built right in *out: an assignment
// would move the element over and then destroy the one moved from (a few ns,
// as much as a cheap stage's own work on an element).
template <typename R, typename Make>
void AssignInPlace(R* out, Make&& make) {
  std::destroy_at(out);
  try {
    ::new (static_cast<void*>(out)) R(make());
  } catch (...) {
    ::new (static_cast<void*>(out)) R();  // *out stays an object to destroy
    throw;
  }
}
}  // namespace internal

class LossFeedback;  // loss_feedback.h

template <typename T>
class Stage {
 public:
  using value_type = T;

  virtual ~Stage() = default;

  // The next element, std::nullopt at end of stream, or an error.
  virtual absl::StatusOr<std::optional<T>> Next() = 0;

  // Like Next(), but never waits for work running on other threads: returns
  // false (leaving `out` untouched) if no element is ready yet. Stages with a
  // queue (Prefetch) override it; synchronous stages compute the element in
  // the caller's thread, which counts as ready. Used by adaptive echo.
  virtual bool TryNext(absl::StatusOr<std::optional<T>>* out) {
    internal::AssignInPlace(out, [this] { return Next(); });
    return true;
  }

  // Thread-safe; idempotent. See the file comment.
  virtual void Cancel() = 0;

  // Appends this stage's statistics after its inputs' (source first).
  virtual void AppendStats(std::vector<StageStats>* out) const = 0;

  // OK if this stage and its inputs can Restart(); called once, before the
  // first Next(), by a stage that will restart it (a stage that must keep
  // something to start over, like VectorSource its items, starts keeping it).
  // Default: UNIMPLEMENTED naming the stage.
  virtual absl::Status EnableRestart() { return CannotRestart(); }

  // Starts over from the first element as epoch `epoch` (see the file
  // comment): the inputs first, then this stage, which drops what it holds.
  // May be called at any point between Next() calls, but not after an error
  // or Cancel(). Default: UNIMPLEMENTED naming the stage.
  virtual absl::Status Restart(uint32_t /*epoch*/) { return CannotRestart(); }

  // Writes this chain's state: the input's first, then this stage's section
  // (StateWriter::BeginStage). Between two Next() calls only.
  virtual absl::Status SaveState(StateWriter& /*w*/) { return CannotCheckpoint(); }
  // Reads what SaveState() wrote, in the same order, into a chain that has
  // not yet been read from. On error the chain is unusable.
  virtual absl::Status RestoreState(StateReader& /*r*/) { return CannotCheckpoint(); }
  // Writes references to `items`, elements this stage emitted, from which
  // Reread() makes them again (the same bytes, indices and epoch).
  virtual absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) {
    if constexpr (std::is_integral_v<T>) {
      for (const T* v : items) w.I64(static_cast<int64_t>(*v));
      return absl::OkStatus();
    } else if constexpr (std::is_floating_point_v<T>) {
      for (const T* v : items) w.Double(static_cast<double>(*v));
      return absl::OkStatus();
    } else {
      (void)items;
      (void)w;
      return CannotCheckpoint();
    }
  }
  // The loss feedback of this chain (loss_feedback.h): the echo planner's,
  // where a trainer's losses go (Pipeline<Batch>::ReportLoss); null if the
  // chain has none. A stage with one input passes its input's on.
  // Thread-safe.
  virtual std::shared_ptr<LossFeedback> loss_feedback() const { return nullptr; }

  // Appends to `out` the `n` elements whose references SaveRefs() wrote.
  virtual absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) {
    if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < n && r.status().ok(); ++i) out->push_back(static_cast<T>(r.I64()));
      return r.status();
    } else if constexpr (std::is_floating_point_v<T>) {
      for (size_t i = 0; i < n && r.status().ok(); ++i) out->push_back(static_cast<T>(r.Double()));
      return r.status();
    } else {
      (void)r;
      (void)n;
      (void)out;
      return CannotCheckpoint();
    }
  }

 protected:
  // The name this stage reports in its stats.
  std::string StageName() const {
    std::vector<StageStats> stats;
    AppendStats(&stats);
    return stats.empty() ? std::string("this stage") : stats.back().name;
  }
  // FAILED_PRECONDITION "<name> cannot save or restore its state ...".
  absl::Status CannotCheckpoint() const {
    return absl::FailedPreconditionError(
        absl::StrCat(StageName(),
                     " cannot save or restore its state (docs/checkpoint.md lists the stages "
                     "that can)"));
  }

  // UNIMPLEMENTED "<name> cannot start a new epoch ...".
  absl::Status CannotRestart() const {
    std::vector<StageStats> stats;
    AppendStats(&stats);
    return absl::UnimplementedError(absl::StrCat(
        stats.empty() ? "this stage" : stats.back().name,
        " cannot start a new epoch: put .Repeat() below it, or use RepeatSource with a factory"));
  }
};

template <typename T>
using StagePtr = std::unique_ptr<Stage<T>>;

// The error every stage returns once cancelled.
inline absl::Status CancelledError() { return absl::CancelledError("pipeline cancelled"); }

// FAILED_PRECONDITION "<stage> cannot save its state after an error: <error>":
// what SaveState() returns once a stage has failed (a sticky error is not saved).
DATAECHO_EXPORT absl::Status CannotSaveAfterError(absl::string_view stage,
                                                  const absl::Status& error);

// --- For a stage of your own (stage_kit.h, docs/writing_stages.md) ---

// INVALID_ARGUMENT "<stage>: null input stage" unless `input` is a stage: the
// first check of every factory.
template <typename T>
absl::Status CheckInput(const StagePtr<T>& input, absl::string_view stage) {
  if (input == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(stage, ": null input stage"));
  return absl::OkStatus();
}
// CheckInput(input, options.name), then options.Validate(): the first checks
// of a factory whose options struct has a `name` and a Validate().
template <typename T, typename Options>
requires requires(const Options& o) { o.Validate(); }
absl::Status CheckInput(const StagePtr<T>& input, const Options& options) {
  absl::Status s = CheckInput(input, options.name);
  return s.ok() ? options.Validate() : s;
}

// Pulls the next element of `input` into `*out`; if the input had none ready
// (TryNext()), blocks in Next(). Returns the nanoseconds it blocked: what a
// stage adds to its input_wait (stats.h), which counts time blocked on an
// input that had nothing ready, never the time a synchronous input spends
// computing in the caller's thread (that is the input's own time). No clock
// is read when nothing blocks; a trace (trace.h) shows each wait, naming the
// stage waited on.
template <typename T>
int64_t PullTimed(Stage<T>& input, absl::StatusOr<std::optional<T>>* out) {
  if (input.TryNext(out)) return 0;
  const int64_t t0 = internal::NowNanos();
  internal::AssignInPlace(out, [&input] { return input.Next(); });
  const int64_t t1 = internal::NowNanos();
  if (TraceEnabled()) [[unlikely]] {
    TraceArg arg;
    arg.stage = &typeid(input);
    TraceComplete("wait on", "wait", t0, t1, std::move(arg));
  }
  return t1 - t0;
}

namespace internal {
// The names the library's own stages use.
using ::dataecho::CheckInput;
using ::dataecho::PullTimed;
}  // namespace internal

// Base class for a stage with one input: holds the input, forwards Cancel()
// and stats, and gives every unary stage the same checkpoint shape:
//
//   SaveState(w)    = SaveInput(w) [the input's SaveState], then
//                     w.BeginStage(StateName(), StateOptionsHash()), then SaveOwn(w)
//   RestoreState(r) = RestoreInput(r), then r.BeginStage(StateName()), then RestoreOwn(r)
//
// A stage that can be saved overrides SaveOwn/RestoreOwn (default: FAILED_PRECONDITION
// naming it), StateName() (default: the name in its stats) and StateOptionsHash()
// (the options that change its output; default 0). Subclasses implement Next() and
// OwnStats().
//
// The lifecycle, written once here:
//   - Errors are sticky: a stage that keeps its first error returns it from
//     StickyError(), and then SaveState() refuses (CannotSaveAfterError) and
//     Restart() returns that error, before the input is asked anything.
//   - Epochs: a stage made with Restarts::kWithInput starts over with its input:
//     EnableRestart() is the input's, and Restart(epoch) = StickyError(), then
//     BeforeRestart() (stop what reads the input), the input's Restart(epoch),
//     then OnRestart(epoch) (drop what this stage holds). Other stages keep
//     Stage's default (UNIMPLEMENTED) or override both calls.
enum class Restarts { kNo, kWithInput };

template <typename Out, typename In>
class UnaryStage : public Stage<Out> {
 public:
  explicit UnaryStage(StagePtr<In> input, Restarts restarts = Restarts::kNo)
      : input_(std::move(input)), restarts_(restarts) {}

  absl::Status EnableRestart() override {
    if (restarts_ == Restarts::kNo) return this->CannotRestart();
    return input_->EnableRestart();
  }
  absl::Status Restart(uint32_t epoch) override {
    if (restarts_ == Restarts::kNo) return this->CannotRestart();
    if (absl::Status e = StickyError(); !e.ok()) return e;
    if (absl::Status s = BeforeRestart(); !s.ok()) return s;
    if (absl::Status s = input_->Restart(epoch); !s.ok()) return s;
    return OnRestart(epoch);
  }

  absl::Status SaveState(StateWriter& w) override {
    if (absl::Status e = StickyError(); !e.ok()) return CannotSaveAfterError(StateName(), e);
    if (absl::Status s = SaveInput(w); !s.ok()) return s;
    w.BeginStage(StateName(), StateOptionsHash());
    return SaveOwn(w);
  }
  absl::Status RestoreState(StateReader& r) override {
    if (absl::Status s = RestoreInput(r); !s.ok()) return s;
    if (absl::Status s = r.BeginStage(StateName()); !s.ok()) return s;
    return RestoreOwn(r);
  }

  void Cancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    OnCancel();
    input_->Cancel();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    input_->AppendStats(out);
    out->push_back(OwnStats());
  }

  std::shared_ptr<LossFeedback> loss_feedback() const override { return input_->loss_feedback(); }

 protected:
  virtual StageStats OwnStats() const = 0;
  // Hook for stages that must wake their own waiters; runs before the input is cancelled.
  virtual void OnCancel() {}

  // The lifecycle hooks (see the class comment). StickyError(): the error this
  // stage failed with, OK while it has not.
  virtual absl::Status StickyError() const { return absl::OkStatus(); }
  virtual absl::Status BeforeRestart() { return absl::OkStatus(); }
  virtual absl::Status OnRestart(uint32_t /*epoch*/) { return absl::OkStatus(); }

  // The checkpoint shape (see the class comment).
  virtual absl::Status SaveInput(StateWriter& w) { return input_->SaveState(w); }
  virtual absl::Status RestoreInput(StateReader& r) { return input_->RestoreState(r); }
  virtual absl::Status SaveOwn(StateWriter& /*w*/) { return this->CannotCheckpoint(); }
  virtual absl::Status RestoreOwn(StateReader& /*r*/) { return this->CannotCheckpoint(); }
  virtual std::string StateName() const { return OwnStats().name; }
  virtual uint64_t StateOptionsHash() const { return 0; }

  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  Stage<In>& input() { return *input_; }
  const Stage<In>& input() const { return *input_; }

 private:
  StagePtr<In> input_;
  const Restarts restarts_;
  std::atomic<bool> cancelled_{false};
};

// Base class for a stage that never changes the elements it passes on (it
// drops, delays or reorders them: Filter, Throttle, Shuffle): an empty state
// section of its own (override SaveOwn/RestoreOwn to add one), references
// and re-reads are its input's (SaveRefs/Reread forwarded), and it starts
// over with its input (Restarts::kWithInput; OnRestart(epoch) runs after the
// input restarted, for a stage that must drop what it holds).
template <typename T>
class PassThroughStage : public UnaryStage<T, T> {
 public:
  explicit PassThroughStage(StagePtr<T> input)
      : UnaryStage<T, T>(std::move(input), Restarts::kWithInput) {}

  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    return this->input().SaveRefs(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    return this->input().Reread(r, n, out);
  }

 protected:
  absl::Status SaveOwn(StateWriter& /*w*/) override { return absl::OkStatus(); }
  absl::Status RestoreOwn(StateReader& /*r*/) override { return absl::OkStatus(); }
};

// Stage, UnaryStage and PassThroughStage for the library's element types are
// compiled once, in src/stage.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(Stage);
extern template class DATAECHO_EXPORT UnaryStage<Record, Record>;
extern template class DATAECHO_EXPORT UnaryStage<Example, Example>;
extern template class DATAECHO_EXPORT UnaryStage<Batch, Batch>;
extern template class DATAECHO_EXPORT UnaryStage<Example, Record>;
extern template class DATAECHO_EXPORT UnaryStage<Batch, Example>;
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(PassThroughStage);

}  // namespace dataecho

#endif  // DATAECHO_STAGE_H_
