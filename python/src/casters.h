// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/casters.h: how option values cross between Python and C++.
//
//   absl::Duration      <- float seconds or datetime.timedelta; -> float seconds
//   dataecho::DType     <- "uint8", "int32", "int64", "float32", "float16",
//                          "bfloat16" (or a numpy dtype of the first five); -> str
//   dataecho::Compression      <- "none", "gzip", "zlib", "auto"; -> str
//   dataecho::EchoPlacement    <- "before_augment", "after_augment", "batch", "adaptive"
//   dataecho::ImageEncoding    <- "raw", "jpeg"
//
// A value of the wrong type fails the cast (pybind11 then raises TypeError); a
// string that names nothing raises dataecho.InvalidArgumentError.
#ifndef DATAECHO_PYTHON_SRC_CASTERS_H_
#define DATAECHO_PYTHON_SRC_CASTERS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "dataecho/echo_placement.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/record_source.h"
#include "dataecho/tensor.h"

namespace dataecho::python {

// The library's parsers (next to their enums), raising InvalidArgumentError:
// the DType named `name` (see the file comment), a Compression ("" is none),
// an ImageEncoding.
DType ParseDType(std::string_view name);
Compression ParseCompression(std::string_view name);
ImageEncoding ParseImageEncoding(std::string_view name);
EchoPlacement ParsePlacement(std::string_view name);

}  // namespace dataecho::python

namespace pybind11::detail {

template <>
struct type_caster<absl::Duration> {
  PYBIND11_TYPE_CASTER(absl::Duration, const_name("float"));
  bool load(handle src, bool convert);
  static handle cast(absl::Duration d, return_value_policy, handle) {
    return PyFloat_FromDouble(absl::ToDoubleSeconds(d));
  }
};

// Enums named by strings: one caster per enum, each with a parse and a name function.
template <typename E, E (*Parse)(std::string_view), std::string_view (*Name)(E)>
struct named_enum_caster {
  PYBIND11_TYPE_CASTER(E, const_name("str"));
  bool load(handle src, bool /*convert*/) {
    if (!isinstance<str>(src)) return false;
    value = Parse(src.cast<std::string>());
    return true;
  }
  static handle cast(E e, return_value_policy, handle) {
    const std::string_view n = Name(e);
    return PyUnicode_FromStringAndSize(n.data(), static_cast<Py_ssize_t>(n.size()));
  }
};

template <>
struct type_caster<dataecho::DType> {
  PYBIND11_TYPE_CASTER(dataecho::DType, const_name("str"));
  bool load(handle src, bool convert);
  static handle cast(dataecho::DType t, return_value_policy, handle) {
    const std::string_view n = dataecho::DTypeName(t);
    return PyUnicode_FromStringAndSize(n.data(), static_cast<Py_ssize_t>(n.size()));
  }
};
template <>
struct type_caster<dataecho::Compression>
    : named_enum_caster<dataecho::Compression, dataecho::python::ParseCompression,
                        dataecho::CompressionName> {};
template <>
struct type_caster<dataecho::ImageEncoding>
    : named_enum_caster<dataecho::ImageEncoding, dataecho::python::ParseImageEncoding,
                        dataecho::ImageEncodingName> {};
template <>
struct type_caster<dataecho::EchoPlacement>
    : named_enum_caster<dataecho::EchoPlacement, dataecho::python::ParsePlacement,
                        dataecho::EchoPlacementName> {};

}  // namespace pybind11::detail

#endif  // DATAECHO_PYTHON_SRC_CASTERS_H_
