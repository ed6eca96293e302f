// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "status.h"

#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace dataecho::python {
namespace {

// The payload of a status that stands for a Python exception: its id.
constexpr char kPythonErrorPayload[] = "type.dataecho.python/exception";
// Exceptions kept for re-raising: a failed pipeline returns its error from
// every later next(), so the most recent ones are enough.
constexpr size_t kKeptErrors = 64;

struct KeptError {
  uint64_t id;
  GilObject exception;
};

absl::Mutex errors_mu;
uint64_t next_error_id ABSL_GUARDED_BY(errors_mu) = 1;
std::deque<KeptError>& KeptErrors() ABSL_EXCLUSIVE_LOCKS_REQUIRED(errors_mu) {
  static auto* kept = new std::deque<KeptError>();  // never destroyed: used at exit
  return *kept;
}

}  // namespace

GilObject::GilObject(py::object obj) : ref_(new py::object(std::move(obj)), Deleter()) {}

void GilObject::Deleter::operator()(py::object* obj) const {
  if (!Py_IsInitialized()) {  // the interpreter is gone: nothing to release
    static_cast<void>(obj->release());
  } else {
    py::gil_scoped_acquire gil;
    py::object dropped = std::move(*obj);
  }
  delete obj;
}

absl::Status StatusFromPythonError(py::error_already_set& error, const char* what) {
  const std::string text =
      absl::StrCat(what, " raised ", py::str(error.type().attr("__name__")).cast<std::string>(),
                   ": ", py::str(error.value()).cast<std::string>());
  absl::Status status = absl::UnknownError(text);
  KeptError kept{0, GilObject(error.value())};
  std::deque<KeptError> evicted;
  {
    absl::MutexLock lock(&errors_mu);
    kept.id = next_error_id++;
    status.SetPayload(kPythonErrorPayload, absl::Cord(absl::StrCat(kept.id)));
    std::deque<KeptError>& all = KeptErrors();
    all.push_back(std::move(kept));
    while (all.size() > kKeptErrors) {
      evicted.push_back(std::move(all.front()));
      all.pop_front();
    }
  }
  return status;  // `evicted` drops its references outside the lock
}

void ThrowStatus(const absl::Status& status) {
  if (const auto payload = status.GetPayload(kPythonErrorPayload)) {
    uint64_t id = 0;
    GilObject exception;
    if (absl::SimpleAtoi(std::string(*payload), &id)) {
      absl::MutexLock lock(&errors_mu);
      for (const KeptError& k : KeptErrors()) {
        if (k.id == id) exception = k.exception;
      }
    }
    if (exception) {
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.get().ptr())),
                      exception.get().ptr());
      throw py::error_already_set();
    }
  }
  const py::object errors = py::module_::import("dataecho.errors");
  const int code = static_cast<int>(status.code());
  const py::object cls = errors.attr("error_class")(code);
  // A message may quote bytes that are not UTF-8 (a stage name in a forged
  // state, a file name): shown as \x escapes, never a UnicodeDecodeError.
  const absl::string_view text = status.message();
  const py::object message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
  if (!message) throw py::error_already_set();
  const py::object exception = cls(message, code);
  PyErr_SetObject(cls.ptr(), exception.ptr());
  throw py::error_already_set();
}

}  // namespace dataecho::python
