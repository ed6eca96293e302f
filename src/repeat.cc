// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations repeat.h declares extern: compiled here once for every program.
#include "dataecho/repeat.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

DATAECHO_TEMPLATES_FOR_ELEMENTS(RepeatStage);

}  // namespace dataecho
