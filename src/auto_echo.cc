// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations auto_echo.h declares extern: compiled here once for every program.
#include "dataecho/auto_echo.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

template class AutoEchoStage<Example>;
template class AutoEchoStage<Batch>;

}  // namespace dataecho
