// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/status.h: absl::Status errors as Python exceptions, and Python
// objects that C++ threads may hold.
//
// Every error becomes an instance of the dataecho.errors class for its code
// (dataecho.DataLossError for DATA_LOSS, ...), a subclass of
// dataecho.StatusError whose `.code` is the absl::StatusCode and whose message
// is the status message (with the URI and offset the library put there):
//
//   absl::StatusOr<Tensor> t = Tensor::Make(...);
//   Tensor tensor = ValueOrThrow(std::move(t));   // raises on error
//
// An exception raised by a Python function that a C++ thread called (a map
// function) travels through the pipeline as an UNKNOWN status carrying a
// reference to it (PythonErrors); ThrowStatus raises the original exception,
// so the caller of next() sees the user's own exception.
//
// Thread safety: ThrowStatus requires the GIL. GilObject and PythonErrors may
// be destroyed on any thread, with or without the GIL.
#ifndef DATAECHO_PYTHON_SRC_STATUS_H_
#define DATAECHO_PYTHON_SRC_STATUS_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
// Every file that casts dataecho values must see the same casters: they come
// with this header, which every binding file includes.
#include "casters.h"

namespace dataecho::python {

namespace py = pybind11;

// Raises the Python exception for `status` (REQUIRES: !status.ok(), the GIL).
[[noreturn]] void ThrowStatus(const absl::Status& status);

inline void CheckOk(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}
template <typename T>
T ValueOrThrow(absl::StatusOr<T> v) {
  if (!v.ok()) ThrowStatus(v.status());
  return *std::move(v);
}

// A Python object owned from C++: copies share it; the last copy drops the
// reference under the GIL, on whatever thread it is destroyed.
class GilObject {
 public:
  GilObject() = default;
  explicit GilObject(py::object obj);
  // REQUIRES: the GIL, to use the object.
  const py::object& get() const { return *ref_; }
  explicit operator bool() const { return ref_ != nullptr; }

 private:
  struct Deleter {
    void operator()(py::object* obj) const;
  };
  std::shared_ptr<py::object> ref_;
};

// Turns the Python exception being handled (REQUIRES: the GIL, inside a catch
// of py::error_already_set) into a status that ThrowStatus re-raises as that
// exception, as long as the pipeline holding it exists. `what` names the caller
// ("map function").
absl::Status StatusFromPythonError(py::error_already_set& error, const char* what);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_STATUS_H_
