// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/version.h"

namespace dataecho {

std::string_view Version() { return DATAECHO_VERSION_STRING; }

}  // namespace dataecho
