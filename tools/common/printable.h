// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// printable.h: text for the terminal from strings a user or a file chose.
//
// A path, URI or flag value may hold control characters (an escape sequence
// that recolours or clears the terminal, a carriage return that hides the
// start of the line, a newline that forges a second message). The programs
// pass every message through TerminalSafe() before printing it.
//
//   std::fprintf(stderr, "dataecho: %s\n", tools::TerminalSafe(message).c_str());
//
// Thread-safe (a pure function).
#ifndef DATAECHO_TOOLS_COMMON_PRINTABLE_H_
#define DATAECHO_TOOLS_COMMON_PRINTABLE_H_

#include <string>
#include <string_view>

namespace dataecho::tools {

// `s` with C0 control characters (newline and tab included), DEL, C1
// control characters (U+0080..U+009F) and bytes that are not part of valid
// UTF-8 written as "\xhh" (the form RedactUri() uses); printable ASCII and
// valid UTF-8 text are kept as they are.
std::string TerminalSafe(std::string_view s);

}  // namespace dataecho::tools

#endif  // DATAECHO_TOOLS_COMMON_PRINTABLE_H_
