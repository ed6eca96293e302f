// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "casters.h"

#include <pybind11/numpy.h>

#include <string>

#include "absl/status/status.h"
#include "status.h"

namespace dataecho::python {

DType ParseDType(std::string_view name) { return ValueOrThrow(::dataecho::ParseDType(name)); }

Compression ParseCompression(std::string_view name) {
  if (name.empty()) return Compression::kNone;
  return ValueOrThrow(::dataecho::ParseCompression(name));
}

ImageEncoding ParseImageEncoding(std::string_view name) {
  return ValueOrThrow(::dataecho::ParseImageEncoding(name));
}

EchoPlacement ParsePlacement(std::string_view name) {
  return ValueOrThrow(ParseEchoPlacement(name));
}

}  // namespace dataecho::python

namespace pybind11::detail {

bool type_caster<absl::Duration>::load(handle src, bool convert) {
  if (src.is_none()) return false;
  const object timedelta = module_::import("datetime").attr("timedelta");
  if (isinstance(src, timedelta)) {
    value = absl::Seconds(src.attr("total_seconds")().cast<double>());
    return true;
  }
  if (!convert && !PyFloat_Check(src.ptr())) return false;
  if (!PyFloat_Check(src.ptr()) && !PyLong_Check(src.ptr())) return false;
  const double seconds = PyFloat_AsDouble(src.ptr());
  if (seconds == -1.0 && PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    return false;
  }
  value = absl::Seconds(seconds);
  return true;
}

bool type_caster<dataecho::DType>::load(handle src, bool /*convert*/) {
  if (isinstance<str>(src)) {
    value = dataecho::python::ParseDType(src.cast<std::string>());
    return true;
  }
  // A numpy dtype (or anything numpy.dtype() accepts, e.g. numpy.float16).
  object np_dtype;
  try {
    np_dtype = module_::import("numpy").attr("dtype")(src);
  } catch (const error_already_set&) {
    return false;
  }
  value = dataecho::python::ParseDType(str(np_dtype.attr("name")).cast<std::string>());
  return true;
}

}  // namespace pybind11::detail
