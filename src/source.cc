// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations source.h declares extern: compiled here once for every program.
#include "dataecho/source.h"

#include "dataecho/example.h"
#include "dataecho/formats/record.h"

namespace dataecho {

template class TakeStage<Record>;
template class TakeStage<Example>;
template class TakeStage<Batch>;
template class VectorSourceStage<Example>;

}  // namespace dataecho
