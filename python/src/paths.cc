// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "paths.h"

#include "absl/strings/str_cat.h"

namespace dataecho::python {

namespace py = pybind11;

namespace {

bool IsOnePath(const py::handle& p) {
  return py::isinstance<py::str>(p) || py::isinstance<py::bytes>(p) || py::hasattr(p, "__fspath__");
}

}  // namespace

std::string PathBytes(const py::handle& path, const char* what) {
  if (!IsOnePath(path)) {
    throw py::type_error(absl::StrCat(what, " must be a str, bytes or os.PathLike, got ",
                                      Py_TYPE(path.ptr())->tp_name));
  }
  // os.fsencode: str -> UTF-8 with surrogateescape, bytes as they are, PathLike via __fspath__.
  const py::object encoded = py::module_::import("os").attr("fsencode")(path);
  return std::string(encoded.cast<py::bytes>());
}

std::vector<std::string> PathList(const py::handle& paths, const char* what) {
  if (IsOnePath(paths)) return {PathBytes(paths, what)};
  if (!py::isinstance<py::iterable>(paths)) {
    throw py::type_error(absl::StrCat(what, " must be a path or a list of paths, got ",
                                      Py_TYPE(paths.ptr())->tp_name));
  }
  std::vector<std::string> out;
  for (const py::handle p : paths) out.push_back(PathBytes(p, what));
  return out;
}

py::str PathStr(std::string_view path) {
  PyObject* s =
      PyUnicode_DecodeUTF8(path.data(), static_cast<Py_ssize_t>(path.size()), "surrogateescape");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

}  // namespace dataecho::python
