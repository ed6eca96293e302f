// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/json.h: the two helpers every JSON writer in dataecho shares.
// Not part of the public API.
#ifndef DATAECHO_INTERNAL_JSON_H_
#define DATAECHO_INTERNAL_JSON_H_

#include <string>
#include <string_view>

#include "dataecho/export.h"

namespace dataecho::internal {

// `s` as a quoted, escaped JSON string.
DATAECHO_EXPORT std::string JsonQuote(std::string_view s);
// `v` as a JSON number: integers without a fraction, others with up to 6
// significant digits; NaN and infinities as null.
DATAECHO_EXPORT std::string JsonNumber(double v);

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_JSON_H_
