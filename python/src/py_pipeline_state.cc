// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.Pipeline's epochs, checkpoints and length (py_pipeline.h):
// set_epoch(), save_state(), restore_state(), len().
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/status_macros.h"
#include "py_pipeline.h"
#include "status.h"

namespace dataecho::python {

py::bytes PipelineHandle::SaveState() {
  CheckOwnProcess();
  AnyPuller puller;
  absl::StatusOr<std::string> state;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kBuilding) {
      // Not started: the chain as it is (restored or fresh) and the element
      // a restore gave back. (Saving calls no Python code.)
      state = std::visit(
          [&](auto& p) -> absl::StatusOr<std::string> {
            using T = typename std::decay_t<decltype(p)>::value_type;
            DATAECHO_ASSIGN_OR_RETURN(StagePtr<T> stage, std::move(p).Release());
            if (absl::Status e = ApplyEpochLocked(*stage); !e.ok()) {
              p = Pipeline<T>(e);  // sticky: next() raises it too
              return e;
            }
            std::span<const T> ahead;
            if (const auto* a = std::get_if<std::vector<T>>(&ahead_)) ahead = *a;
            absl::StatusOr<std::string> s = Puller<T>::SaveStateOf(*stage, ahead);
            p = Pipeline<T>(std::move(stage));
            return s;
          },
          *builder_);
    } else if (state_ == State::kIterating) {
      puller = puller_;
    } else {
      ThrowStatus(CheckBuildingLocked("save_state"));
    }
  }
  if (!std::holds_alternative<std::monostate>(puller)) {
    py::gil_scoped_release nogil;
    state = std::visit(
        [](auto& p) -> absl::StatusOr<std::string> {
          if constexpr (std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) {
            return absl::InternalError("no puller");
          } else {
            return p->SaveState();
          }
        },
        puller);
  }
  return py::bytes(ValueOrThrow(std::move(state)));
}

void PipelineHandle::RestoreState(std::string_view state) {
  CheckOwnProcess();
  std::optional<AnyPipeline> pipeline;
  {
    absl::MutexLock lock(&mu_);
    CheckOk(CheckBuildingLocked("restore_state"));
    if (restored_) {
      ThrowStatus(absl::FailedPreconditionError(
          "restore_state() was already called on this pipeline: build a new one"));
    }
    // Restoring reads records again and runs map functions (which may need
    // the GIL): done without the lock and without the GIL.
    pipeline = std::move(builder_);
    builder_.reset();
    state_ = State::kRestoring;
  }
  AnyAhead ahead;
  absl::Status status;
  {
    py::gil_scoped_release nogil;
    status = std::visit(
        [&](auto& p) -> absl::Status {
          using T = typename std::decay_t<decltype(p)>::value_type;
          DATAECHO_ASSIGN_OR_RETURN(StagePtr<T> stage, std::move(p).Release());
          absl::Status s;
          {
            absl::MutexLock lock(&mu_);
            s = ApplyEpochLocked(*stage);
          }
          if (!s.ok()) {
            p = Pipeline<T>(s);
            return s;
          }
          p = Pipeline<T>(std::move(stage));
          // A bad state leaves it unchanged; one that fails half-way is its error.
          std::vector<T> restored;
          s = p.RestoreStateWith(state, Puller<T>::kSection, [&](Stage<T>& last, StateReader& r) {
            return Puller<T>::ReadAhead(last, r, &restored);
          });
          if (!restored.empty()) ahead = std::move(restored);
          return s;
        },
        *pipeline);
  }
  bool closed = false;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) {
      closed = true;
    } else {
      state_ = State::kBuilding;
      builder_ = std::move(pipeline);
      ahead_ = std::move(ahead);
      if (status.ok()) restored_ = true;
    }
  }
  if (closed) {
    {
      py::gil_scoped_release nogil;  // joins the stages' threads
      pipeline.reset();
    }
    ThrowStatus(absl::CancelledError("pipeline closed while restore_state() ran"));
  }
  CheckOk(status);
}

void PipelineHandle::SetEpoch(int64_t epoch) {
  CheckOwnProcess();
  if (epoch < 0 || epoch > int64_t{UINT32_MAX}) {
    ThrowStatus(absl::InvalidArgumentError(
        absl::StrCat("set_epoch: epoch must be in [0, 2^32), got ", epoch)));
  }
  absl::MutexLock lock(&mu_);
  CheckOk(CheckBuildingLocked("set_epoch"));
  if (restored_) {
    ThrowStatus(absl::FailedPreconditionError(
        "set_epoch() after restore_state(): the state holds the epoch; set it before restoring"));
  }
  epoch_ = static_cast<uint32_t>(epoch);
  epoch_applied_ = false;
}

std::optional<uint32_t> PipelineHandle::epoch() const {
  absl::MutexLock lock(&mu_);
  return epoch_;
}

void PipelineHandle::InheritFrom(const PipelineHandle& from, const char* method) {
  const std::optional<uint32_t> e = from.epoch();
  Length length = LengthAfter(method, from.length());
  std::vector<Buffer> kept;
  {
    absl::MutexLock lock(&from.mu_);
    kept = from.kept_;
  }
  absl::MutexLock lock(&mu_);
  epoch_ = e;
  length_ = std::move(length);
  kept_.insert(kept_.end(), kept.begin(), kept.end());
}

void PipelineHandle::KeepUntilClosed(Buffer buffer) {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kClosed) kept_.push_back(std::move(buffer));
}

Length PipelineHandle::length() const {
  absl::MutexLock lock(&mu_);
  return length_;
}

void PipelineHandle::set_length(Length length) {
  absl::MutexLock lock(&mu_);
  length_ = std::move(length);
}

void RegisterPipelineState(PipelineClass& cls) {
  cls.def("save_state", &PipelineHandle::SaveState,
          "The pipeline's position as bytes (a few hundred, plus a reference per element "
          "a stage buffers): behind the last element next() returned, the elements the "
          "pipeline pulled ahead included. Restore it with restore_state() into a pipeline "
          "built the same way. Waits (GIL released) for an element being made. "
          "FailedPreconditionError naming a stage that cannot save its state; the "
          "pipeline's error if it failed.")
      .def(
          "restore_state",
          [](PipelineHandle& self, const py::object& state) {
            // bytes, or any contiguous bytes-like object (bytearray, memoryview);
            // a TypeError names the type only (never repeats a large argument).
            if (py::isinstance<py::bytes>(state)) {
              self.RestoreState(std::string_view(state.cast<py::bytes>()));
              return;
            }
            if (PyObject_CheckBuffer(state.ptr()) == 0) {
              throw py::type_error(
                  absl::StrCat("restore_state(): the state must be bytes or a "
                               "bytes-like object, got ",
                               Py_TYPE(state.ptr())->tp_name));
            }
            Py_buffer view;
            if (PyObject_GetBuffer(state.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
              throw py::error_already_set();
            }
            const std::string copy(static_cast<const char*>(view.buf),
                                   static_cast<size_t>(view.len));
            PyBuffer_Release(&view);
            self.RestoreState(copy);
          },
          py::arg("state"),
          "Puts this freshly built pipeline where the one that saved `state` was: it then "
          "yields exactly what that one would have yielded next. Call it after the last "
          "builder call and before the first next() (else FailedPreconditionError). "
          "InvalidArgumentError for the state of a pipeline of another shape (naming the "
          "first stage that differs), DataLossError for a truncated or corrupted state (the "
          "pipeline is unchanged by those); an error reading the buffered records again.")
      .def(
          "set_epoch",
          [](PipelineHandle& self, const py::object& epoch) {
            // An int (operator.index), in range: no float truncated, no 2**64
            // wrapped, and the value the caller gave in the message.
            if (PyBool_Check(epoch.ptr()) != 0 || PyIndex_Check(epoch.ptr()) == 0) {
              throw py::type_error(absl::StrCat("set_epoch: epoch must be an int, got ",
                                                Py_TYPE(epoch.ptr())->tp_name));
            }
            const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(epoch.ptr()));
            if (!value) throw py::error_already_set();
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
            if (overflow != 0 || v < 0 || v > int64_t{UINT32_MAX}) {
              ThrowStatus(absl::InvalidArgumentError(
                  absl::StrCat("set_epoch: epoch must be in [0, 2^32), got ",
                               py::repr(value).cast<std::string>())));
            }
            self.SetEpoch(v);
          },
          py::arg("epoch"),
          "Starts this freshly built pipeline as epoch `epoch`: its stages draw shuffle "
          "order, echo copies, augmentations and file order for that epoch, exactly as "
          "the epoch-th pass of repeat() does, and its elements carry the epoch. Before "
          "the first next() and before restore_state(); the pipelines later builder calls "
          "return keep it. Starting a pipeline at an epoch > 0 needs stages that can start "
          "over (else next() raises UnimplementedError naming the stage).")
      .def(
          "__len__",
          [](const PipelineHandle& self) -> int64_t {
            const Length n = self.length().Resolve();  // a file source counts its records now
            if (n.known()) return n.n;
            if (n.kind == Length::Kind::kInfinite) {
              throw py::type_error("len() of a pipeline that repeats forever (.repeat(-1))");
            }
            throw py::type_error("len() of a pipeline whose length is not known: " + n.why);
          },
          "Elements per pass where the pipeline knows it: a source of known size "
          "(from_arrays, from_examples; from_tfrecord counts its files' records the first "
          "time len() asks, one read of each file, cached per file version) and builder "
          "calls whose count follows from their options (prefetch, shuffle, map, cache keep "
          "it; echo with a whole factor, batch, take, shard, repeat(k) compute it). TypeError "
          "otherwise (after filter, adaptive or auto echo, a fractional echo factor, another "
          "file source, repeat(-1)), naming the call.")
      .def(
          "__bool__", [](const PipelineHandle&) { return true; },
          "Always true (a pipeline is not a container, whatever its len()).")
      .def_property_readonly("epoch", &PipelineHandle::epoch,
                             "The epoch set_epoch() gave (None if it was not called).");
}

}  // namespace dataecho::python
