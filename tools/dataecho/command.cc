// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "command.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "dataecho/storage/glob.h"
#include "dataecho/text.h"
#include "fmt/format.h"

ABSL_FLAG(std::string, compression, "",
          "compression of the files: none, gzip, zlib (stat also auto); the default depends on "
          "the subcommand");

namespace dataecho::tool {

int Fail(const absl::Status& status) {
  const std::string code = absl::StatusCodeToString(status.code());
  const std::string message = TerminalSafe({status.message().data(), status.message().size()});
  std::fprintf(stderr, "dataecho: %s: %s\n", code.c_str(), message.c_str());
  return 1;
}

int UsageError(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "dataecho %.*s: %s\nTry 'dataecho %.*s --help' for more information.\n",
               static_cast<int>(command.size()), command.data(), TerminalSafe(message).c_str(),
               static_cast<int>(command.size()), command.data());
  return 2;
}

int UsageError(std::string_view command, const absl::Status& status) {
  return UsageError(command, std::string_view(status.message().data(), status.message().size()));
}

int RunCommand(const CommandSpec& spec, const std::vector<std::string>& argv) {
  absl::StatusOr<tools::CommandLine> args = tools::ParseFlags(argv, spec.flags);
  if (!args.ok()) return UsageError(spec.name, args.status());
  if (args->help) {
    const std::string usage =
        fmt::format("{}{}{}", spec.usage_head, tools::FlagsUsage(spec.flags, 23), spec.usage_tail);
    std::fputs(usage.c_str(), stdout);
    return 0;
  }
  const bool takes_uris = spec.operands == Operands::kUris;
  if (takes_uris && args->positional.empty()) return UsageError(spec.name, "no URI given");
  if (!takes_uris && !args->positional.empty()) {
    return UsageError(spec.name, fmt::format("unexpected argument '{}'", args->positional[0]));
  }
  return spec.run(*args);
}

absl::StatusOr<std::vector<std::string>> ExpandPatterns(ObjectStore& store,
                                                        const std::vector<std::string>& patterns) {
  std::vector<std::string> uris;
  for (const std::string& pattern : patterns) {
    if (!IsGlob(pattern)) {
      uris.push_back(pattern);
      continue;
    }
    absl::StatusOr<std::vector<std::string>> expanded = ExpandUris(store, pattern);
    if (!expanded.ok()) return expanded.status();
    uris.insert(uris.end(), expanded->begin(), expanded->end());
  }
  return uris;
}

absl::Status CheckRange(std::string_view name, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("--{} must be an integer in [{}, {}], got '{}'", name, min, max, value));
}

}  // namespace dataecho::tool
