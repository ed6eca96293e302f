// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// command.h: what the `dataecho` subcommands share: their entry points, the
// --compression flag both take, and how they report errors.
//
// Each subcommand defines its flags (ABSL_FLAG) in its own file and reads
// them with tools::ParseFlags() over the arguments after its name, so a flag
// of one subcommand is an unknown flag to the other.
#ifndef DATAECHO_TOOLS_DATAECHO_COMMAND_H_
#define DATAECHO_TOOLS_DATAECHO_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/command_line.h"
#include "dataecho/storage/object_store.h"

// Both subcommands take --compression, with their own defaults and values;
// empty = not given (ParseFlags' `given` tells an explicit empty value apart).
ABSL_DECLARE_FLAG(std::string, compression);

namespace dataecho::tool {

// The subcommands: `args` are the arguments after the subcommand's name.
// Each returns the exit status.
int StatCommand(const std::vector<std::string>& args);
int ConvertCommand(const std::vector<std::string>& args);
int ShardsCommand(const std::vector<std::string>& args);

// Prints "dataecho: CODE: message" to stderr and returns the exit status (1).
int Fail(const absl::Status& status);
// Prints "dataecho <command>: message" and a hint to stderr; returns 2.
int UsageError(std::string_view command, std::string_view message);
int UsageError(std::string_view command, const absl::Status& status);

// A subcommand's command line: its flags, its usage text around them, and
// whether it takes URIs (or patterns) after the flags, at least one, or no
// argument at all.
struct CommandSpec {
  std::string_view name;
  absl::Span<const tools::FlagSpec> flags;
  std::string_view usage_head;
  std::string_view usage_tail;
  bool takes_uris = false;
};

// How every subcommand starts: reads `argv` into the flags of `spec`
// (tools::ParseFlags) and `*args`. Returns the exit status when the
// subcommand has nothing more to do: 2 after a usage error (a bad flag, no
// URI or an unexpected argument), 0 after --help printed the usage to stdout;
// nullopt when it runs on.
std::optional<int> ParseCommand(const CommandSpec& spec, const std::vector<std::string>& argv,
                                tools::CommandLine* args);

// The URIs that `patterns` name: a glob pattern (storage/glob.h) expanded in
// `store`, any other URI as it is (its errors come when it is read).
absl::StatusOr<std::vector<std::string>> ExpandPatterns(ObjectStore& store,
                                                        const std::vector<std::string>& patterns);

// INVALID_ARGUMENT "--name must be an integer in [min, max], got 'value'"
// unless min <= value <= max.
absl::Status CheckRange(std::string_view name, int64_t value, int64_t min, int64_t max);

}  // namespace dataecho::tool

#endif  // DATAECHO_TOOLS_DATAECHO_COMMAND_H_
