// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The dataecho._dataecho extension module (the dataecho package re-exports it).
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.h"
#include "dataecho/version.h"

PYBIND11_MODULE(_dataecho, m) {
  namespace de = dataecho::python;
  m.doc() = "The C++ part of the dataecho package (import dataecho instead).";
  m.attr("__version__") = std::string(dataecho::Version());
  de::RegisterOptionClasses(m);  // first: the other parts' docstrings show option values
  de::RegisterElements(m);
  de::RegisterFormats(m);
  de::RegisterSources(m);
  de::RegisterMemorySources(m);
  de::RegisterGenerator(m);
  de::RegisterCheckpointDir(m);
  de::RegisterTrace(m);
  de::RegisterStats(m);
  de::PipelineClass pipeline = de::RegisterPipeline(m);
  de::RegisterStages(m, pipeline);
  de::RegisterTransforms(m, pipeline);
  de::RegisterSteps(m, pipeline);
}
