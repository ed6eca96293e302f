// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.CheckpointDir: a directory of checkpoint files (C++
// dataecho/checkpoint_dir.h) for a Python training loop: the loader's state
// and the model's bytes in one atomic file.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint_dir.h"
#include "status.h"

namespace dataecho::python {
namespace {

// Warnings from the C++ side, raised as Python warnings by the calling
// thread once the call returns (the C++ side may warn without the GIL).
class Warnings {
 public:
  void Add(std::string_view w) {
    absl::MutexLock lock(&mu_);
    pending_.emplace_back(w);
  }
  // REQUIRES: the GIL.
  void Raise() {
    std::vector<std::string> pending;
    {
      absl::MutexLock lock(&mu_);
      pending.swap(pending_);
    }
    for (const std::string& w : pending) {
      if (PyErr_WarnEx(PyExc_RuntimeWarning, w.c_str(), 1) != 0) throw py::error_already_set();
    }
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> pending_ ABSL_GUARDED_BY(mu_);
};

class PyCheckpointDir {
 public:
  PyCheckpointDir(std::string path, int keep, bool background, bool read_only)
      : path_(path), warnings_(std::make_shared<Warnings>()) {
    CheckpointDirOptions options{.keep = keep,
                                 .warn = [w = warnings_](std::string_view text) { w->Add(text); },
                                 .background = background};
    absl::StatusOr<std::unique_ptr<CheckpointDir>> dir;
    {
      py::gil_scoped_release nogil;
      dir = read_only ? CheckpointDir::OpenForReading(std::move(path), std::move(options))
                      : CheckpointDir::OpenForWriting(std::move(path), std::move(options));
    }
    dir_ = ValueOrThrow(std::move(dir));
    warnings_->Raise();
  }

  // {name: bytes} in the order written, or None.
  py::object ReadNewest() {
    absl::StatusOr<std::optional<Checkpoint>> c;
    {
      py::gil_scoped_release nogil;
      c = Dir().ReadNewest();
    }
    warnings_->Raise();
    std::optional<Checkpoint> checkpoint = ValueOrThrow(std::move(c));
    if (!checkpoint.has_value()) return py::none();
    py::dict sections;
    for (const auto& [name, bytes] : checkpoint->sections) {
      sections[py::str(name)] = py::bytes(bytes);
    }
    py::object ns = py::module_::import("types").attr("SimpleNamespace");
    return ns(py::arg("step") = checkpoint->step, py::arg("path") = checkpoint->path,
              py::arg("sections") = sections);
  }

  void Write(int64_t step, const py::dict& sections) {
    std::vector<CheckpointSection> parts;
    for (const auto& [key, value] : sections) {
      if (!py::isinstance<py::str>(key)) {
        throw py::type_error("CheckpointDir.write: section names must be str");
      }
      if (!py::isinstance<py::buffer>(value)) {
        throw py::type_error("CheckpointDir.write: section '" + key.cast<std::string>() +
                             "' must be bytes-like (bytes, bytearray, memoryview, numpy array)");
      }
      const py::buffer_info info = py::reinterpret_borrow<py::buffer>(value).request();
      // A copy: the training loop may change its buffers while a background
      // write is in flight.
      parts.push_back({key.cast<std::string>(),
                       absl::Cord(std::string(static_cast<const char*>(info.ptr),
                                              static_cast<size_t>(info.size * info.itemsize)))});
    }
    absl::Status s;
    {
      py::gil_scoped_release nogil;
      s = Dir().Write(step, std::move(parts));
    }
    CheckOk(s);
  }

  void Flush() {
    absl::Status s;
    {
      py::gil_scoped_release nogil;
      s = Dir().Flush();
    }
    CheckOk(s);
  }

  // Waits for a background write and releases the lock (idempotent).
  void Close() {
    if (dir_ == nullptr) return;
    absl::Status s;
    {
      py::gil_scoped_release nogil;
      s = dir_->Flush();
      dir_.reset();
    }
    warnings_->Raise();
    CheckOk(s);
  }

  const std::string& Path() const { return path_; }

 private:
  CheckpointDir& Dir() {
    if (dir_ == nullptr) {
      throw py::value_error("CheckpointDir is closed");
    }
    return *dir_;
  }

  const std::string path_;
  std::shared_ptr<Warnings> warnings_;
  std::unique_ptr<CheckpointDir> dir_;
};

}  // namespace

void RegisterCheckpointDir(py::module_& m) {
  py::class_<PyCheckpointDir>(m, "CheckpointDir",
                              "A directory of checkpoint files a training loop can trust: each "
                              "checkpoint is one file of named sections (the loader's state, the "
                              "model's bytes) written atomically (temporary file, fsync, rename), "
                              "the newest `keep` kept. Opened for writing it holds the "
                              "directory's lock (one writer: a second is refused naming the "
                              "first) and checks at once that it can write there. "
                              "read_newest() skips damaged files with a RuntimeWarning naming "
                              "them. A context manager (close() on exit).")
      .def(py::init<std::string, int, bool, bool>(), py::arg("path"), py::kw_only(),
           py::arg("keep") = 2, py::arg("background") = false, py::arg("read_only") = false)
      .def("read_newest", &PyCheckpointDir::ReadNewest,
           "The newest complete checkpoint as an object with .step, .path and .sections "
           "({name: bytes}), or None when there is none; dataecho.DataLossError when every "
           "checkpoint is damaged.")
      .def("write", &PyCheckpointDir::Write, py::arg("step"), py::arg("sections"),
           "Writes the checkpoint of `step` (>= 0): `sections` maps names to bytes-like "
           "values. With background=True it returns at once and the next write(), flush() or "
           "close() raises its error.")
      .def("flush", &PyCheckpointDir::Flush, "Waits for a background write; raises its error.")
      .def("close", &PyCheckpointDir::Close,
           "Waits for a background write and releases the directory's lock.")
      .def_property_readonly("path", &PyCheckpointDir::Path)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyCheckpointDir& self, const py::args&) { self.Close(); });
}

}  // namespace dataecho::python
