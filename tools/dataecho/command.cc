// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "command.h"

#include <cstdio>

#include "absl/flags/flag.h"
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

absl::Status CheckRange(std::string_view name, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("--{} must be an integer in [{}, {}], got '{}'", name, min, max, value));
}

}  // namespace dataecho::tool
