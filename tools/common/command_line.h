// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// command_line.h: reads a program's command line into its Abseil flags
// (ABSL_FLAG) and writes the flags' part of its usage text.
//
// The tools take their flags from absl::flags like every program of the
// project, but not through absl::ParseCommandLine(): that one exits with
// status 1 on an unknown flag or a bad value, and the tools promise exit
// status 2 and an INVALID_ARGUMENT naming the flag (scripts check both). A
// program (or one subcommand) lists the flags it accepts; ParseFlags() sets
// them from the arguments and leaves the checks of their values to the caller.
//
//   ABSL_FLAG(int64_t, shards, 4, "number of shards (default 4)");
//   constexpr tools::FlagSpec kFlags[] = {{"shards", "N"}};
//
//   absl::StatusOr<tools::CommandLine> cl = tools::ParseFlags(args, kFlags);
//   if (!cl.ok()) return UsageError(cl.status());          // exit status 2
//   if (cl->help) return PrintUsage(tools::FlagsUsage(kFlags, 23));
//   const int64_t shards = absl::GetFlag(FLAGS_shards);
//
// Syntax: "--name=value"; a boolean flag also as bare "--name"; "-h" and
// "--help" ask for help; "--" ends the flags; "-" and every argument not
// starting with "-" are positional. A double flag takes only finite numbers.
//
// Not thread-safe: flags are process-wide; parse once, before starting
// threads.
#ifndef DATAECHO_TOOLS_COMMON_COMMAND_LINE_H_
#define DATAECHO_TOOLS_COMMON_COMMAND_LINE_H_

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace dataecho::tools {

// A flag a program accepts: the name of its ABSL_FLAG and, for the usage
// text, what its value is called ("URI" prints "--source=URI"; empty for a
// boolean flag).
struct FlagSpec {
  std::string_view name;
  std::string_view value_name;
  // Replaces the flag's own help text in this usage (for a flag that two
  // subcommands share with different meanings of its default). Lines are
  // separated by '\n'.
  std::string_view help = {};
};

struct CommandLine {
  bool help = false;                    // -h or --help was given
  std::vector<std::string> positional;  // the arguments that are not flags, in order
  std::set<std::string> given;          // names of the flags that were given
};

// Sets every flag of `flags` to its default, then to the values in `args`
// (the arguments after the program or subcommand name). INVALID_ARGUMENT,
// naming the flag, for a flag not in `flags`, a missing value or a value
// that does not parse as the flag's type.
// REQUIRES: every name in `flags` is a linked-in ABSL_FLAG.
absl::StatusOr<CommandLine> ParseFlags(absl::Span<const std::string> args,
                                       absl::Span<const FlagSpec> flags);

// One entry per flag: "  --name=VALUE" padded to `help_column`, then the
// flag's help text, its further lines indented to `help_column`. With
// `show_defaults`, a flag that is not a boolean and has a non-empty default
// ends with "[default]", right-aligned to column 77 (on a line of its own if
// the line would pass 80 columns).
std::string FlagsUsage(absl::Span<const FlagSpec> flags, size_t help_column,
                       bool show_defaults = false);

}  // namespace dataecho::tools

#endif  // DATAECHO_TOOLS_COMMON_COMMAND_LINE_H_
