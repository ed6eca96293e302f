// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations prefetch.h declares extern: compiled here once for every program.
#include "dataecho/prefetch.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

DATAECHO_TEMPLATES_FOR_ELEMENTS(PrefetchStage);

}  // namespace dataecho
