// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations shuffle.h declares extern: compiled here once for every program.
#include "dataecho/shuffle.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

DATAECHO_TEMPLATES_FOR_ELEMENTS(ShuffleStage);

}  // namespace dataecho
