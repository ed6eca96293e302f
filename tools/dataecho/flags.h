// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// flags.h: the tool's small command-line parser: "--name=value", boolean
// "--name", "--" ends the flags, everything else is a positional argument.
#ifndef DATAECHO_TOOLS_DATAECHO_FLAGS_H_
#define DATAECHO_TOOLS_DATAECHO_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace dataecho::tool {

struct ParsedArgs {
  std::map<std::string, std::string> flags;  // name -> value ("" for a bare --name)
  std::vector<std::string> positional;

  bool Has(std::string_view name) const { return flags.count(std::string(name)) > 0; }
  std::string Get(std::string_view name, std::string_view fallback) const;
  // INVALID_ARGUMENT if the value is not an integer in [min, max].
  absl::StatusOr<int64_t> GetInt(std::string_view name, int64_t fallback, int64_t min,
                                 int64_t max) const;
};

// Parses args; `value_flags` take "=value", `bool_flags` must not. Unknown
// flags are INVALID_ARGUMENT. "-h" is read as "--help".
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::set<std::string>& value_flags,
                                     const std::set<std::string>& bool_flags);

// Prints "dataecho: CODE: message" to stderr and returns the exit status (1).
int Fail(const absl::Status& status);
// Prints "dataecho <command>: message" and a hint to stderr; returns 2.
int UsageError(std::string_view command, std::string_view message);
int UsageError(std::string_view command, const absl::Status& status);

// The tool's subcommands: argv after the command name.
int StatCommand(const std::vector<std::string>& args);
int ConvertCommand(const std::vector<std::string>& args);

}  // namespace dataecho::tool

#endif  // DATAECHO_TOOLS_DATAECHO_FLAGS_H_
