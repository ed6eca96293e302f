// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.start_trace / stop_trace: the pipeline timeline (C++ trace.h);
// dataecho.trace (python/dataecho/__init__.py) is the context manager over them.
#include <string>

#include "dataecho/trace.h"
#include "status.h"

namespace dataecho::python {

void RegisterTrace(py::module_& m) {
  m.def(
      "start_trace",
      [](const std::string& path, int64_t max_events) {
        CheckOk(StartTrace(path, {.max_events = max_events}));
      },
      py::arg("path"), py::kw_only(), py::arg("max_events") = TraceOptions{}.max_events,
      "Starts recording a timeline of every pipeline in this process (threads, waits, map "
      "calls, reads, echo, checkpoints) as Chrome trace-event JSON, written to `path` by "
      "stop_trace(); open it in ui.perfetto.dev. At most `max_events` events are kept (the file "
      "says how many were dropped). FailedPreconditionError if a trace runs.");
  m.def(
      "stop_trace",
      [] {
        absl::Status s;
        {
          py::gil_scoped_release nogil;
          s = StopTrace();
        }
        CheckOk(s);
      },
      "Stops the trace and writes its file.");
}

}  // namespace dataecho::python
