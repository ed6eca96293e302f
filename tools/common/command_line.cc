// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "common/command_line.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "fmt/format.h"

namespace dataecho::tools {
namespace {

const FlagSpec* FindSpec(absl::Span<const FlagSpec> flags, std::string_view name) {
  for (const FlagSpec& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// What a value that absl could not parse should have been.
std::string Expected(const absl::CommandLineFlag& flag, const std::string& absl_error) {
  if (flag.IsOfType<int>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint64_t>())
    return "not an integer";
  if (flag.IsOfType<double>()) return "not a finite number";
  if (flag.IsOfType<bool>()) return "not true or false";
  return absl_error;
}

// (Abseil's string_view need not be std::string_view.)
absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Sets `flag` from `value`; INVALID_ARGUMENT "--name=value: why" if it does not parse.
absl::Status Set(absl::CommandLineFlag& flag, std::string_view value) {
  std::string error;
  bool ok = flag.ParseFrom(AbslView(value), &error);
  if (ok && flag.IsOfType<double>()) ok = std::isfinite(*flag.TryGet<double>());
  if (!ok) {
    return absl::InvalidArgumentError(
        fmt::format("--{}={}: {}", std::string(flag.Name()), value, Expected(flag, error)));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::CommandLineFlag*> Find(std::string_view name) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(AbslView(name));
  if (flag == nullptr)
    return absl::InternalError(fmt::format("flag --{} is not linked into the program", name));
  return flag;
}

}  // namespace

absl::StatusOr<CommandLine> ParseFlags(absl::Span<const std::string> args,
                                       absl::Span<const FlagSpec> flags) {
  for (const FlagSpec& spec : flags) {
    absl::StatusOr<absl::CommandLineFlag*> flag = Find(spec.name);
    if (!flag.ok()) return flag.status();
    if (absl::Status s = Set(**flag, (*flag)->DefaultValue()); !s.ok()) return s;
  }
  CommandLine out;
  bool flags_done = false;
  for (const std::string& arg : args) {
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      out.positional.push_back(arg);
    } else if (arg == "--") {
      flags_done = true;
    } else if (arg == "-h" || arg == "--help") {
      out.help = true;
    } else if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          fmt::format("unexpected argument '{}' (flags are --name=value; see --help)", arg));
    } else {
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (FindSpec(flags, name) == nullptr)
        return absl::InvalidArgumentError(fmt::format("unknown flag --{} (see --help)", name));
      absl::StatusOr<absl::CommandLineFlag*> flag = Find(name);
      if (!flag.ok()) return flag.status();
      if (eq == std::string::npos && !(*flag)->IsOfType<bool>())
        return absl::InvalidArgumentError(fmt::format("--{0} needs a value (--{0}=...)", name));
      const std::string_view value =
          eq == std::string::npos ? std::string_view("true") : std::string_view(arg).substr(eq + 1);
      if (absl::Status s = Set(**flag, value); !s.ok()) return s;
      out.given.insert(name);
    }
  }
  return out;
}

std::string FlagsUsage(absl::Span<const FlagSpec> flags, size_t help_column, bool show_defaults) {
  constexpr size_t kDefaultsColumn = 77;  // where a default's "[...]" ends
  constexpr size_t kMaxWidth = 80;        // else it goes on a line of its own
  std::string out;
  for (const FlagSpec& spec : flags) {
    std::string line = fmt::format("  --{}", spec.name);
    if (!spec.value_name.empty()) line += fmt::format("={}", spec.value_name);
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(AbslView(spec.name));
    const std::string help =
        !spec.help.empty() ? std::string(spec.help) : (flag ? flag->Help() : std::string());
    size_t start = 0;
    while (true) {
      line.resize(std::max(line.size() + 1, help_column), ' ');
      const size_t end = help.find('\n', start);
      line += help.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (end == std::string::npos) break;
      out += line + "\n";
      line.clear();
      start = end + 1;
    }
    if (show_defaults && flag != nullptr && !flag->IsOfType<bool>() &&
        !flag->DefaultValue().empty()) {
      const std::string tag = fmt::format("[{}]", flag->DefaultValue());
      if (line.size() + 1 + tag.size() > kMaxWidth) {
        out += line + "\n";
        line.clear();
      }
      line.resize(
          std::max(line.size() + 1, kDefaultsColumn - std::min(kDefaultsColumn, tag.size())), ' ');
      line += tag;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace dataecho::tools
