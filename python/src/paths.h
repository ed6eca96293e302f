// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/paths.h: file names and URIs from Python, as the bytes the OS
// takes.
//
// A file name that is not valid UTF-8 reaches Python as a str with surrogate
// escapes (os.fsdecode, os.listdir, glob); pybind11's std::string caster
// cannot encode it. PathBytes() takes a str (encoded as os.fsencode does:
// UTF-8 with surrogateescape), bytes or an os.PathLike, and raises TypeError
// naming the type for anything else:
//
//   std::string path = PathBytes(arg, "write_tfrecord(): path");
#ifndef DATAECHO_PYTHON_SRC_PATHS_H_
#define DATAECHO_PYTHON_SRC_PATHS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace dataecho::python {

// The bytes of one path (see the file comment); `what` names it in errors.
std::string PathBytes(const pybind11::handle& path, const char* what);

// One path, or an iterable of them (str/bytes/PathLike each).
std::vector<std::string> PathList(const pybind11::handle& paths, const char* what);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_PATHS_H_
