// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations adaptive_echo.h declares extern: compiled here once for every program.
#include "dataecho/adaptive_echo.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

template class AdaptiveEchoStage<Example>;
template class AdaptiveEchoStage<Batch>;

}  // namespace dataecho
