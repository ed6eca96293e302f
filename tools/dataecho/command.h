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

// What a subcommand takes after its flags: nothing, or URIs (or patterns),
// at least one.
enum class Operands { kNone, kUris };

// A subcommand: its name, its flags and the usage text around them, its
// operands, and its work once the command line is read (returns the exit
// status).
struct CommandSpec {
  std::string_view name;
  absl::Span<const tools::FlagSpec> flags;
  std::string_view usage_head;
  std::string_view usage_tail;
  Operands operands = Operands::kNone;
  int (*run)(const tools::CommandLine& args) = nullptr;
};

// How every subcommand runs: reads `argv` into the flags of `spec`
// (tools::ParseFlags), then returns spec.run(the command line). 2 after a
// usage error (a bad flag, no URI, an unexpected argument); 0 after --help
// printed the usage to stdout.
int RunCommand(const CommandSpec& spec, const std::vector<std::string>& argv);

// The URIs that `patterns` name: a glob pattern (storage/glob.h) expanded in
// `store`, any other URI as it is (its errors come when it is read).
absl::StatusOr<std::vector<std::string>> ExpandPatterns(ObjectStore& store,
                                                        const std::vector<std::string>& patterns);

// INVALID_ARGUMENT "--name must be an integer in [min, max], got 'value'"
// unless min <= value <= max.
absl::Status CheckRange(std::string_view name, int64_t value, int64_t min, int64_t max);

}  // namespace dataecho::tool

#endif  // DATAECHO_TOOLS_DATAECHO_COMMAND_H_
