// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.from_generator(): a Python iterator as a pipeline's source.
//
// The C++ GeneratorSource (source.h) calls a function on the thread that
// pulls it (the binding's puller, a prefetch() thread, ...); here that
// function takes the GIL only around next(it) and the conversion of the item
// into an Example, so the stages after it run without the GIL. An exception
// from the iterator travels in order and is raised by the pipeline's next()
// as it was raised.
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dataecho/pipeline.h"
#include "elements.h"
#include "options.h"
#include "py_pipeline.h"
#include "status.h"

namespace dataecho::python {
namespace {

// An item the iterator yielded as an Example: a dataecho.Example as it is; an
// array (one component); a tuple (components, label) whose components are an
// array or a list of arrays. Arrays are copied into C++ buffers. Items other
// than Examples get source_index = their position in the stream.
absl::StatusOr<Example> ItemToExample(const py::handle& item, uint64_t position,
                                      const std::string& what) {
  if (py::isinstance<Example>(item)) return item.cast<Example>();
  Example e;
  e.source_index = position;
  py::handle components = item;
  if (py::isinstance<py::tuple>(item)) {
    const auto t = item.cast<py::tuple>();
    if (t.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(what, " yielded a tuple of ", t.size(),
                                                     " items at position ", position,
                                                     "; expected (components, label)"));
    }
    components = t[0];
    e.label = t[1].cast<int64_t>();
  }
  if (py::isinstance<py::list>(components)) {
    for (const py::handle c : components) e.components.push_back(TensorFromArray(c));
  } else {
    e.components.push_back(TensorFromArray(components));
  }
  return e;
}

}  // namespace

void RegisterGenerator(py::module_& m) {
  DefSigned(
      m, Signature("from_generator").Arg("iterable"),
      "A pipeline of Examples from a Python iterable or iterator (a generator, a list, a "
      "torch Dataset's iterator, ...). Each item is a dataecho.Example, an array (one "
      "component, label 0) or a tuple (components, label) with components an array or a "
      "list of arrays (copied into C++ buffers); items other than Examples get their "
      "position in the stream as source_index. next(iterator) runs on the pipeline's thread "
      "that pulls the source, which takes the GIL for that call only; put a prefetch() after "
      "the source to overlap it with the rest. An exception from the iterator is raised by "
      "the pipeline's next() as it was raised (after the items before it). The source "
      "cannot start over: repeat() above it raises UnimplementedError (use cache() first).",
      [](const py::object& iterable) {
        const std::string what =
            "from_generator iterator " +
            py::repr(py::type::of(iterable).attr("__name__")).cast<std::string>();
        GilObject it(py::iter(iterable));  // TypeError here if not iterable
        auto position = std::make_shared<uint64_t>(0);
        std::function<absl::StatusOr<std::optional<Example>>()> next =
            [it, what, position]() -> absl::StatusOr<std::optional<Example>> {
          py::gil_scoped_acquire gil;
          try {
            PyObject* raw = PyIter_Next(it.get().ptr());
            if (raw == nullptr) {
              if (PyErr_Occurred() != nullptr) throw py::error_already_set();
              return std::nullopt;
            }
            const py::object item = py::reinterpret_steal<py::object>(raw);
            absl::StatusOr<Example> e = ItemToExample(item, *position, what);
            if (!e.ok()) return e.status();
            ++*position;
            return *std::move(e);
          } catch (py::error_already_set& e) {
            return StatusFromPythonError(e, what.c_str());
          } catch (const std::exception& e) {
            return absl::InvalidArgumentError(
                absl::StrCat(what, ": item ", *position, ": ", e.what()));
          }
        };
        return MakeHandle(FromGenerator<Example>(std::move(next)));
      },
      py::arg("iterable"));
}

}  // namespace dataecho::python
