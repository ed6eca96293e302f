// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/elements.h: the element types as Python objects.
//
//   dataecho.Record   one undecoded record: .data (uint8 array), .uri, .offset, ...
//   dataecho.Example  tensors + label + source/repeat index: .components (arrays)
//   dataecho.Batch    fused rows: .components, .labels, .source_indices,
//                     .repeat_indices (arrays), .num_rows, .fresh_rows
//
// Arrays are zero-copy, read-only NumPy views of the element's buffers: their
// base is the Python element object, which co-owns the buffers, so the bytes
// stay valid (and a pooled batch buffer is not reused) while any view exists.
// dtypes: uint8, int32, int64, float32, float16 (numpy.float16); bfloat16,
// which NumPy lacks, is viewed as uint16 bit patterns (use to_dlpack() for
// torch.bfloat16).
//
// Thread safety: the objects are immutable; functions here require the GIL.
#ifndef DATAECHO_PYTHON_SRC_ELEMENTS_H_
#define DATAECHO_PYTHON_SRC_ELEMENTS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "absl/status/statusor.h"
#include "dataecho/example.h"
#include "dataecho/record.h"
#include "dataecho/tensor.h"

namespace dataecho::python {

namespace py = pybind11;

// A read-only NumPy array viewing `tensor`'s bytes; `owner` keeps them alive.
py::array TensorView(const Tensor& tensor, py::handle owner);
// A new Tensor holding a copy of `array`'s elements (C order). Raises TypeError
// for a dtype that has no DType.
Tensor TensorFromArray(const py::handle& array);
// The Example a Python function returned (an error naming `what` otherwise).
absl::StatusOr<Example> ExampleFromPython(py::handle value, const char* what);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_ELEMENTS_H_
