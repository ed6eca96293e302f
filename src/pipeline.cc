// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations pipeline.h declares extern: compiled here once for every program.
#include "dataecho/pipeline.h"

#include "dataecho/batch.h"
#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

template class Pipeline<Record>;
template class Pipeline<Example>;
template class Pipeline<Batch>;

}  // namespace dataecho
