// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The in-memory sources: from_arrays (rows of NumPy-like arrays, copied once
// into one shared buffer) and from_examples.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings.h"
#include "dataecho/pipeline.h"
#include "dataecho/tensor.h"
#include "elements.h"
#include "length.h"
#include "py_pipeline.h"
#include "signature.h"
#include "status.h"

namespace dataecho::python {
namespace {

// from_arrays()'s labels as int64, one per row (0s without labels). Integer
// and bool arrays as they are; floats only when every value is a whole number
// within int64 (labels read as floats); anything else raises
// InvalidArgumentError naming the first bad index, never a truncated or
// wrapped label.
std::vector<int64_t> LabelValues(const py::object& labels, int64_t rows) {
  std::vector<int64_t> out(static_cast<size_t>(rows), 0);
  if (labels.is_none()) return out;
  const py::array a = py::module_::import("numpy").attr("asarray")(labels);
  if (a.ndim() != 1 || a.shape(0) != rows) {
    ThrowStatus(absl::InvalidArgumentError(
        absl::StrCat("from_arrays(): labels must be 1-D with one value per image row (", rows,
                     " rows), got shape ", py::repr(a.attr("shape")).cast<std::string>())));
  }
  auto bad = [](int64_t i, const py::object& value, const char* why) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
        "from_arrays(): labels[", i, "] = ", py::repr(value).cast<std::string>(), " ", why)));
  };
  constexpr int kFlags = py::array::c_style | py::array::forcecast;
  switch (a.dtype().kind()) {
    case 'b':
    case 'i': {
      const auto l = py::array_t<int64_t, kFlags>::ensure(a);
      std::memcpy(out.data(), l.data(), static_cast<size_t>(rows) * sizeof(int64_t));
      return out;
    }
    case 'u': {
      const auto l = py::array_t<uint64_t, kFlags>::ensure(a);
      for (int64_t i = 0; i < rows; ++i) {
        const uint64_t v = l.data()[i];
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          bad(i, py::int_(v), "is out of range for an int64 label");
        }
        out[static_cast<size_t>(i)] = static_cast<int64_t>(v);
      }
      return out;
    }
    case 'f': {
      const auto l = py::array_t<double, kFlags>::ensure(a);
      for (int64_t i = 0; i < rows; ++i) {
        const double v = l.data()[i];
        if (!std::isfinite(v) || v != std::trunc(v)) {
          bad(i, py::float_(v), "is not an integer label");
        }
        // [-2^63, 2^63): exactly the doubles that convert to int64.
        if (v < -0x1p63 || v >= 0x1p63) bad(i, py::float_(v), "is out of range for an int64 label");
        out[static_cast<size_t>(i)] = static_cast<int64_t>(v);
      }
      return out;
    }
    default:
      ThrowStatus(absl::InvalidArgumentError(
          absl::StrCat("from_arrays(): labels must be integers, got an array of dtype ",
                       py::str(a.dtype()).cast<std::string>())));
  }
}

void BindMemorySources(py::module_& m) {
  DefSigned(
      m, Signature("from_arrays").Arg("images").Arg("labels=None"),
      "A pipeline of Examples from in-memory arrays: row i of `images` (copied once, then "
      "shared: rows are slices of one buffer, freed when the pipeline is closed or deleted) "
      "with label labels[i] (0 without labels) and "
      "source_index i. Labels are integers (any integer dtype, or floats holding whole numbers "
      "within int64); a fractional, NaN, infinite or out-of-range label raises "
      "InvalidArgumentError naming its index.",
      [](const py::object& images, const py::object& labels) {
        const Tensor all = TensorFromArray(images);  // one copy of every row
        if (all.rank() < 1) throw py::value_error("from_arrays(): images need a row dimension");
        const int64_t rows = all.dim(0);
        const std::vector<int64_t> label_values = LabelValues(labels, rows);
        const Shape row_shape(all.shape().begin() + 1, all.shape().end());
        const size_t row_bytes = rows == 0 ? 0 : all.byte_size() / static_cast<size_t>(rows);
        std::vector<Example> examples(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) {
          Example& e = examples[static_cast<size_t>(i)];
          e.components.push_back(ValueOrThrow(
              Tensor::Make(all.dtype(), row_shape,
                           all.buffer().Slice(static_cast<size_t>(i) * row_bytes, row_bytes))));
          e.label = label_values[static_cast<size_t>(i)];
          e.source_index = static_cast<uint64_t>(i);
        }
        auto out = MakeHandle(FromVector(std::move(examples)));
        out->set_length(Length::Known(rows));
        out->KeepUntilClosed(all.buffer());
        return out;
      },
      py::arg("images"), py::arg("labels") = py::none());
  DefSigned(
      m, Signature("from_examples").Arg("examples"),
      "A pipeline of the given dataecho.Example objects, in order.",
      [](const std::vector<Example>& examples) {
        auto out = MakeHandle(FromVector(examples));
        out->set_length(Length::Known(static_cast<int64_t>(examples.size())));
        return out;
      },
      py::arg("examples"));
}

}  // namespace

void RegisterMemorySources(py::module_& m) { BindMemorySources(m); }

}  // namespace dataecho::python
