// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/paths.h: file names and URIs from Python, as the bytes the OS
// takes.
//
// A file name that is not valid UTF-8 reaches Python as a str with surrogate
// escapes (os.fsdecode, os.listdir, glob); pybind11's std::string caster
// cannot encode it. PathBytes() takes a str (encoded as os.fsencode does:
// UTF-8 with surrogateescape), bytes or an os.PathLike, and raises TypeError
// naming the type for anything else. PathStr() is the way back:
//
//   std::string path = PathBytes(arg, "write_tfrecord(): path");
//   py::str shown = PathStr(path);   // os.fsdecode(os.fsencode(arg))
#ifndef DATAECHO_PYTHON_SRC_PATHS_H_
#define DATAECHO_PYTHON_SRC_PATHS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <vector>

namespace dataecho::python {

// The bytes of one path (see the file comment); `what` names it in errors.
std::string PathBytes(const pybind11::handle& path, const char* what);

// One path, or an iterable of them (str/bytes/PathLike each).
std::vector<std::string> PathList(const pybind11::handle& paths, const char* what);

// A path or URI back to Python: a str, its bytes that are not UTF-8 as surrogate
// escapes (os.fsdecode), so that PathBytes() gives the same bytes again.
pybind11::str PathStr(std::string_view path);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PATHS_H_
