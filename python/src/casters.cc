// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "casters.h"

#include <pybind11/numpy.h>

#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "status.h"

namespace dataecho::python {
namespace {

[[noreturn]] void ThrowUnknownName(std::string_view what, std::string_view name,
                                   std::string_view valid) {
  ThrowStatus(
      absl::InvalidArgumentError(fmt::format("unknown {} '{}' (one of {})", what, name, valid)));
}

}  // namespace

DType ParseDType(std::string_view name) {
  for (DType t : {DType::kUInt8, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat16,
                  DType::kBFloat16}) {
    if (DTypeName(t) == name) return t;
  }
  ThrowUnknownName("dtype", name, "uint8, int32, int64, float32, float16, bfloat16");
}

Compression ParseCompression(std::string_view name) {
  if (name == "none" || name.empty()) return Compression::kNone;
  if (name == "gzip") return Compression::kGzip;
  if (name == "zlib") return Compression::kZlib;
  if (name == "auto") return Compression::kAuto;
  ThrowUnknownName("compression", name, "none, gzip, zlib, auto");
}

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kZlib: return "zlib";
    case Compression::kAuto: return "auto";
  }
  return "none";
}

ImageEncoding ParseImageEncoding(std::string_view name) {
  if (name == "raw") return ImageEncoding::kRaw;
  if (name == "jpeg") return ImageEncoding::kJpeg;
  ThrowUnknownName("image encoding", name, "raw, jpeg");
}

std::string_view ImageEncodingName(ImageEncoding e) {
  return e == ImageEncoding::kJpeg ? "jpeg" : "raw";
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
