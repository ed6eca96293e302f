// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/bindings.h: the parts of the dataecho._dataecho extension module,
// one function per area, called in this order by module.cc.
//
//   options.cc, options_sources.cc, options_steps.cc
//                                   option specs; classes (EchoOptions, ...); AUTOTUNE
//   elements.cc                     Record, Example, Batch (zero-copy arrays, DLPack)
//   formats.cc                      crc32c, encode_image_record, write_tfrecord
//   sources.cc                      ObjectStore, sharding, file sources (from_tfrecord, ...)
//   memory_sources.cc               from_arrays, from_examples
//   py_pipeline.cc                  Pipeline: iteration, stats, cancellation, close
//   pipeline_stages.cc              prefetch, echo, adaptive/auto echo, shuffle, batch, ...
//   transforms.cc                   map, echoed_batches, decoders and augmenters
//   pipeline_steps.cc               filter, cache, zip, interleave, padded_batch
//   generator.cc                    from_generator (a Python iterator as a source)
//   checkpoint_dir.cc               CheckpointDir (checkpoint files of a training loop)
//   trace.cc                        start_trace, stop_trace (the pipeline timeline)
//   stats.cc                        format_stats (a table and verdict of stats dicts)
//
// A new area (a C++ header's worth of API) gets a file and a function here.
#ifndef DATAECHO_PYTHON_SRC_BINDINGS_H_
#define DATAECHO_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

#include "py_pipeline.h"

namespace dataecho::python {

void RegisterOptionClasses(pybind11::module_& m);
void RegisterElements(pybind11::module_& m);
void RegisterFormats(pybind11::module_& m);
void RegisterSources(pybind11::module_& m);
void RegisterMemorySources(pybind11::module_& m);
PipelineClass RegisterPipeline(pybind11::module_& m);
void RegisterStages(pybind11::module_& m, PipelineClass& cls);
void RegisterTransforms(pybind11::module_& m, PipelineClass& cls);
void RegisterSteps(pybind11::module_& m, PipelineClass& cls);
void RegisterGenerator(pybind11::module_& m);
void RegisterCheckpointDir(pybind11::module_& m);
void RegisterTrace(pybind11::module_& m);
void RegisterStats(pybind11::module_& m);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_BINDINGS_H_
