// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// A stage's stats as the dict Pipeline.stats() gives (python/src/stats.cc).
#ifndef DATAECHO_PYTHON_SRC_STATS_H_
#define DATAECHO_PYTHON_SRC_STATS_H_

#include <pybind11/pybind11.h>

#include "dataecho/stats.h"

namespace dataecho::python {

namespace py = pybind11;

// {"stage", "elements", "bytes", "input_wait_s", "consumer_wait_s", "threads",
// every extra figure by its key, "decisions": [notes] if any}.
py::dict StatsDict(const StageStats& s);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_STATS_H_
