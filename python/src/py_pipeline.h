// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/py_pipeline.h: dataecho.Pipeline, a typed C++ pipeline behind one
// Python class.
//
// The C++ builder is typed (Pipeline<T>); Python's is not. The binding exposes
// three element types, each a step of the usual input path:
//
//   Record  (file sources)  --map(decoder)-->  Example  --batch()-->  Batch
//
// and a PipelineHandle holds a Pipeline of one of them (AnyPipeline). A builder
// call moves the C++ pipeline out of its handle (which is then "consumed") and
// returns a new handle, as the C++ builder's && methods do:
//
//   std::shared_ptr<PipelineHandle> out = Then(self, "echo", [&](auto p) -> AnyPipeline {
//     return std::move(p).Echo(options);
//   });
//
// A build error (a bad option) is raised at the call. Iterating starts a
// Puller (puller.h) on the last stage; next() waits for it with the GIL
// released, in slices between which it checks for signals (KeyboardInterrupt).
//
// Lifetime: close(), del (the last reference) and interpreter exit (an atexit
// hook: CloseAll) cancel the pipeline, join its threads and destroy its stages
// with the GIL released, so map functions waiting for the GIL finish first.
//
// Epochs and checkpoints: set_epoch(k) (before the first next()) starts the
// chain as epoch k when iteration starts (Stage::Restart(k), exactly what a
// C++ .Repeat() does at its k-th pass), and builder calls carry the epoch to
// the pipeline they return. save_state() is the position behind the last
// element next() returned (puller.h: the elements pulled ahead are part of it);
// restore_state() puts a pipeline of the same shape there, after its last
// builder call and before its first next(). Misuse (after the first next(),
// twice, a builder call after restore_state()) is FailedPreconditionError.
//
// fork(): a handle belongs to the process that made it, whose threads run its
// stages. In a child of fork(), next(), builder calls and stats() on an
// inherited handle raise FailedPreconditionError ("this pipeline belongs to
// the parent process ...; build a new one in the child") at once, cancel() does
// nothing, and close(), del and exit leak it instead of joining threads that
// do not exist there. Pipelines made in the child work as usual.
//
// Thread safety: every method may be called from any Python thread.
#ifndef DATAECHO_PYTHON_SRC_PY_PIPELINE_H_
#define DATAECHO_PYTHON_SRC_PY_PIPELINE_H_

#include <pybind11/pybind11.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/buffer.h"
#include "dataecho/example.h"
#include "dataecho/loss_feedback.h"
#include "dataecho/pipeline.h"
#include "dataecho/record.h"
#include "length.h"
#include "puller.h"

namespace dataecho::python {

namespace py = pybind11;

using AnyPipeline = std::variant<Pipeline<Record>, Pipeline<Example>, Pipeline<Batch>>;

// "Record", "Example" or "Batch".
template <typename T>
constexpr const char* ElementName() {
  if constexpr (std::is_same_v<T, Record>) {
    return "Record";
  } else if constexpr (std::is_same_v<T, Example>) {
    return "Example";
  } else {
    return "Batch";
  }
}

class PipelineHandle {
 public:
  explicit PipelineHandle(AnyPipeline pipeline);
  ~PipelineHandle();
  PipelineHandle(const PipelineHandle&) = delete;
  PipelineHandle& operator=(const PipelineHandle&) = delete;

  // The element type: "Record", "Example" or "Batch".
  const char* element_type() const { return element_type_; }

  // Moves the C++ pipeline out for the builder call `method`; raises
  // ValueError if this handle was consumed, is iterating or is closed.
  AnyPipeline TakeForBuilder(const char* method);

  // The next element as a Python object; raises StopIteration at the end and
  // the error's exception on an error. REQUIRES: the GIL.
  py::object Next();
  // Thread-safe; blocked and later next() calls raise CancelledError.
  void Cancel();
  // Cancels, joins the threads and destroys the stages (keeping their last
  // stats). Idempotent; with or without the GIL.
  void Close();
  // Every stage's stats, source first (the last ones after close()).
  std::vector<StageStats> Stats() const;

  // See the file comment. REQUIRES: the GIL (released while they wait).
  py::bytes SaveState();
  void RestoreState(std::string_view state);
  void SetEpoch(int64_t epoch);
  // The epoch set_epoch() gave (this handle's or the one it was built from).
  std::optional<uint32_t> epoch() const;
  // The builder call `method` made this handle from `from`: takes its epoch
  // and its length as LengthAfter(method) carries it (call sites whose count
  // depends on their options set it after: set_length()).
  void InheritFrom(const PipelineHandle& from, const char* method);

  // Elements per pass where known (length.h); len() raises TypeError else.
  Length length() const;
  void set_length(Length length);

  // Holds `buffer` until close() (and the pipelines later builder calls
  // return, until theirs): a source's copy of the caller's data (from_arrays)
  // is then freed by close(), as a C++ program frees its rows after the
  // pipeline, not by the pulling thread while it makes the last batches.
  void KeepUntilClosed(Buffer buffer);

  // The pipeline's loss feedback (loss_feedback.h): its echo planner's, or
  // null. While building, the chain's; once iterating, the one the chain had
  // when iteration started (py_pipeline_loss.cc: report_loss()).
  std::shared_ptr<LossFeedback> loss_feedback() const;

  // Closes every live handle: the atexit hook.
  static void CloseAll();

 private:
  enum class State { kBuilding, kRestoring, kConsumed, kIterating, kClosed };
  using AnyPuller = std::variant<std::monostate, std::shared_ptr<Puller<Record>>,
                                 std::shared_ptr<Puller<Example>>, std::shared_ptr<Puller<Batch>>>;

  // The elements a restored state had pulled ahead, for the puller.
  using AnyAhead =
      std::variant<std::monostate, std::vector<Record>, std::vector<Example>, std::vector<Batch>>;

  AnyPuller StartLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Restart(epoch_) on `stage` unless already done (or epoch 0).
  template <typename T>
  absl::Status ApplyEpochLocked(Stage<T>& stage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FAILED_PRECONDITION unless builder_ is there to be restored or started.
  absl::Status CheckBuildingLocked(const char* method) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const char* const element_type_;
  // Made in another process (before a fork() that led to this one).
  bool Inherited() const;
  // Raises FailedPreconditionError in a process that inherited this handle.
  void CheckOwnProcess() const;

  const pid_t pid_;            // the process that made this handle
  const uint64_t generation_;  // fork_generation when it was made (py_pipeline.cc)
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kBuilding;
  std::string consumed_by_ ABSL_GUARDED_BY(mu_);
  std::optional<AnyPipeline> builder_ ABSL_GUARDED_BY(mu_);
  AnyPuller puller_ ABSL_GUARDED_BY(mu_);
  std::vector<StageStats> final_stats_ ABSL_GUARDED_BY(mu_);
  std::optional<uint32_t> epoch_ ABSL_GUARDED_BY(mu_);
  bool epoch_applied_ ABSL_GUARDED_BY(mu_) = false;
  bool restored_ ABSL_GUARDED_BY(mu_) = false;
  AnyAhead ahead_ ABSL_GUARDED_BY(mu_);
  Length length_ ABSL_GUARDED_BY(mu_) = Length::Unknown("from this source (its size is not read)");
  std::vector<Buffer> kept_ ABSL_GUARDED_BY(mu_);                     // KeepUntilClosed()
  std::shared_ptr<LossFeedback> loss_feedback_ ABSL_GUARDED_BY(mu_);  // set by StartLocked()
};

// A new registered handle for `pipeline`; raises its build error, if any.
std::shared_ptr<PipelineHandle> MakeHandle(AnyPipeline pipeline);

// The builder call `method` on `self`: `f` gets the C++ Pipeline<T> (by
// value) and returns the new AnyPipeline.
template <typename F>
std::shared_ptr<PipelineHandle> Then(PipelineHandle& self, const char* method, F&& f) {
  AnyPipeline in = self.TakeForBuilder(method);
  AnyPipeline out =
      std::visit([&](auto&& p) -> AnyPipeline { return f(std::move(p)); }, std::move(in));
  std::shared_ptr<PipelineHandle> handle = MakeHandle(std::move(out));
  handle->InheritFrom(self, method);
  return handle;
}

// Raises TypeError: `method` needs elements of type `wanted`, the pipeline has `have`.
[[noreturn]] void ThrowWrongElement(const char* method, const char* wanted, const char* have,
                                    const char* hint = "");

template <typename T>
absl::Status PipelineHandle::ApplyEpochLocked(Stage<T>& stage) {
  if (!epoch_.has_value() || epoch_applied_) return absl::OkStatus();
  epoch_applied_ = true;
  if (*epoch_ == 0)
    return absl::OkStatus();  // a fresh chain is epoch 0 (a generator cannot restart)
  if (absl::Status s = stage.EnableRestart(); !s.ok()) return s;
  return stage.Restart(*epoch_);
}

using PipelineClass = py::class_<PipelineHandle, std::shared_ptr<PipelineHandle>>;

// Binds set_epoch, epoch, save_state, restore_state, __len__ and __bool__
// (py_pipeline_state.cc); RegisterPipeline calls it.
void RegisterPipelineState(PipelineClass& cls);
// report_loss() (py_pipeline_loss.cc).
void RegisterPipelineLoss(PipelineClass& cls);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PY_PIPELINE_H_
