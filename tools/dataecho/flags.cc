// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "flags.h"

#include <charconv>
#include <cstdio>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace dataecho::tool {

std::string ParsedArgs::Get(std::string_view name, std::string_view fallback) const {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? std::string(fallback) : it->second;
}

absl::StatusOr<int64_t> ParsedArgs::GetInt(std::string_view name, int64_t fallback, int64_t min,
                                           int64_t max) const {
  auto it = flags.find(std::string(name));
  if (it == flags.end()) return fallback;
  int64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    return absl::InvalidArgumentError(
        fmt::format("--{} must be an integer in [{}, {}], got '{}'", name, min, max, s));
  }
  return v;
}

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::set<std::string>& value_flags,
                                     const std::set<std::string>& bool_flags) {
  ParsedArgs out;
  bool flags_done = false;
  for (const std::string& arg : args) {
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      out.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h") {
      out.flags["help"] = "";
      continue;
    }
    if (arg.rfind("--", 0) != 0)
      return absl::InvalidArgumentError(fmt::format("unknown option '{}'", arg));
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (value_flags.count(name)) {
      if (eq == std::string::npos)
        return absl::InvalidArgumentError(fmt::format("--{} needs a value (--{}=...)", name, name));
      out.flags[name] = arg.substr(eq + 1);
    } else if (bool_flags.count(name) || name == "help") {
      if (eq != std::string::npos)
        return absl::InvalidArgumentError(fmt::format("--{} takes no value", name));
      out.flags[name] = "";
    } else {
      return absl::InvalidArgumentError(fmt::format("unknown option '--{}'", name));
    }
  }
  return out;
}

int Fail(const absl::Status& status) {
  const std::string code = absl::StatusCodeToString(status.code());
  std::fprintf(stderr, "dataecho: %s: %.*s\n", code.c_str(),
               static_cast<int>(status.message().size()), status.message().data());
  return 1;
}

int UsageError(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "dataecho %.*s: %.*s\nTry 'dataecho %.*s --help' for more information.\n",
               static_cast<int>(command.size()), command.data(), static_cast<int>(message.size()),
               message.data(), static_cast<int>(command.size()), command.data());
  return 2;
}

int UsageError(std::string_view command, const absl::Status& status) {
  return UsageError(command, std::string_view(status.message().data(), status.message().size()));
}

}  // namespace dataecho::tool
