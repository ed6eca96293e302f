// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// text.h: text for reports and messages: JSON values written the way the
// library writes its own (StatsToJson), and user-chosen text made safe to
// print on a terminal.
//
// A program that writes its results as JSON next to the pipeline's stats
// uses the same quoting and number format; a program that prints a path, a
// URI or a flag value (which may hold an escape sequence, a carriage return
// or a newline that forges a second message) passes it through TerminalSafe
// first, as the library does for every name it puts into a status:
//
//   std::string json = fmt::format("{{\"source\": {}, \"factor\": {}}}",
//                                  dataecho::JsonQuote(uri), dataecho::JsonNumber(2.5));
//   std::fprintf(stderr, "cannot read %s\n", dataecho::TerminalSafe(path).c_str());
//
// Thread-safe (pure functions).
#ifndef DATAECHO_TEXT_H_
#define DATAECHO_TEXT_H_

#include <string>
#include <string_view>

#include "dataecho/export.h"

namespace dataecho {

// `s` as a quoted, escaped JSON string ("a\"b" for a"b; control characters
// as \n, \t or \u00XX; other bytes as they are).
DATAECHO_EXPORT std::string JsonQuote(std::string_view s);

// `v` as a JSON number: integers without a fraction, others with up to 6
// significant digits; NaN and infinities as null.
DATAECHO_EXPORT std::string JsonNumber(double v);

// `s` with C0 control characters (newline and tab included), DEL, C1 control
// characters (U+0080..U+009F) and bytes that are not part of valid UTF-8
// written as "\xhh"; printable ASCII and valid UTF-8 text are kept as they
// are. RedactUri (storage/object_store.h) escapes the same way.
DATAECHO_EXPORT std::string TerminalSafe(std::string_view s);

}  // namespace dataecho

#endif  // DATAECHO_TEXT_H_
