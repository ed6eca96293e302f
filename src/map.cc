// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations map.h declares extern: compiled here once for every program.
#include "dataecho/map.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

template class MapStage<Record, Example>;
template class MapStage<Example, Example>;
template class MapStage<Batch, Batch>;
template class MapStage<Record, Record>;

}  // namespace dataecho
