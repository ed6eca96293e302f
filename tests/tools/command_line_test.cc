// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// tools::ParseFlags and tools::FlagsUsage (tools/common/command_line.h), over
// flags defined here.
#include "common/command_line.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, cl_test_name, "none", "a string\nover two lines");
ABSL_FLAG(int64_t, cl_test_count, 4, "an integer");
ABSL_FLAG(double, cl_test_ratio, 0.5, "a double");
ABSL_FLAG(bool, cl_test_verbose, false, "a boolean");
ABSL_FLAG(int64_t, cl_test_other, 0, "a flag of another command");

namespace dataecho::tools {
namespace {

constexpr FlagSpec kFlags[] = {{"cl_test_name", "NAME"},
                               {"cl_test_count", "N"},
                               {"cl_test_ratio", "R"},
                               {"cl_test_verbose", ""}};

constexpr char kLongHelp[] = "a help text long enough to push its default past column 80";

absl::StatusOr<CommandLine> Parse(const std::vector<std::string>& args) {
  return ParseFlags(args, kFlags);
}

TEST(CommandLineTest, SetsFlagsAndKeepsPositionalArguments) {
  absl::StatusOr<CommandLine> cl =
      Parse({"a", "--cl_test_name=x=y", "--cl_test_count=-3", "-", "--cl_test_ratio=2.5",
             "--cl_test_verbose", "b", "--", "--cl_test_count=9", "-h"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(absl::GetFlag(FLAGS_cl_test_name), "x=y");  // split at the first '='
  EXPECT_EQ(absl::GetFlag(FLAGS_cl_test_count), -3);
  EXPECT_EQ(absl::GetFlag(FLAGS_cl_test_ratio), 2.5);
  EXPECT_TRUE(absl::GetFlag(FLAGS_cl_test_verbose));
  // "-" and everything after "--" are positional.
  EXPECT_EQ(cl->positional, (std::vector<std::string>{"a", "-", "b", "--cl_test_count=9", "-h"}));
  EXPECT_FALSE(cl->help);
  EXPECT_EQ(cl->given, (std::set<std::string>{"cl_test_name", "cl_test_count", "cl_test_ratio",
                                              "cl_test_verbose"}));
}

TEST(CommandLineTest, EveryParseStartsFromTheDefaults) {
  ASSERT_TRUE(Parse({"--cl_test_count=7", "--cl_test_verbose"}).ok());
  absl::StatusOr<CommandLine> cl = Parse({"--cl_test_name="});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(absl::GetFlag(FLAGS_cl_test_count), 4);
  EXPECT_FALSE(absl::GetFlag(FLAGS_cl_test_verbose));
  EXPECT_EQ(absl::GetFlag(FLAGS_cl_test_name), "");  // given, and empty
  EXPECT_EQ(cl->given, (std::set<std::string>{"cl_test_name"}));
}

TEST(CommandLineTest, Help) {
  for (const char* arg : {"-h", "--help"}) {
    absl::StatusOr<CommandLine> cl = Parse({"x", arg});
    ASSERT_TRUE(cl.ok()) << cl.status();
    EXPECT_TRUE(cl->help) << arg;
  }
  EXPECT_FALSE(Parse({"--help", "--cl_test_bogus"}).ok());  // an error wins over help
}

TEST(CommandLineTest, BooleanForms) {
  EXPECT_TRUE(Parse({"--cl_test_verbose=true"}).ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_cl_test_verbose));
  EXPECT_TRUE(Parse({"--cl_test_verbose", "--cl_test_verbose=false"}).ok());
  EXPECT_FALSE(absl::GetFlag(FLAGS_cl_test_verbose));
}

TEST(CommandLineTest, ErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--cl_test_bogus=1"}, "unknown flag --cl_test_bogus (see --help)"},
      {{"--cl_test_other=1"}, "unknown flag --cl_test_other (see --help)"},  // not in the list
      {{"--flagfile=x"}, "unknown flag --flagfile (see --help)"},  // absl's own flags neither
      {{"-x"}, "unexpected argument '-x' (flags are --name=value; see --help)"},
      {{"--cl_test_count"}, "--cl_test_count needs a value (--cl_test_count=...)"},
      {{"--cl_test_count=abc"}, "--cl_test_count=abc: not an integer"},
      {{"--cl_test_count="}, "--cl_test_count=: not an integer"},
      {{"--cl_test_count=99999999999999999999"},
       "--cl_test_count=99999999999999999999: not an integer"},
      {{"--cl_test_ratio=x"}, "--cl_test_ratio=x: not a finite number"},
      {{"--cl_test_ratio=inf"}, "--cl_test_ratio=inf: not a finite number"},
      {{"--cl_test_ratio=nan"}, "--cl_test_ratio=nan: not a finite number"},
      {{"--cl_test_verbose=maybe"}, "--cl_test_verbose=maybe: not true or false"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CommandLine> cl = Parse(c.args);
    ASSERT_FALSE(cl.ok()) << c.args[0];
    EXPECT_EQ(cl.status().code(), absl::StatusCode::kInvalidArgument) << c.args[0];
    EXPECT_EQ(cl.status().message(), c.message);
  }
}

TEST(CommandLineTest, Usage) {
  // Help at column 20 (at least one space after the flag); further lines indented to it.
  EXPECT_EQ(FlagsUsage(kFlags, 20),
            "  --cl_test_name=NAME a string\n"
            "                    over two lines\n"
            "  --cl_test_count=N an integer\n"
            "  --cl_test_ratio=R a double\n"
            "  --cl_test_verbose a boolean\n");
  // A help text of this usage's own; the default right-aligned to column 77
  // (not for a boolean).
  const FlagSpec renamed[] = {{"cl_test_count", "N", "how many (shared flag)"},
                              {"cl_test_verbose", ""}};
  const std::string usage = FlagsUsage(renamed, 21, /*show_defaults=*/true);
  EXPECT_EQ(usage, "  --cl_test_count=N  how many (shared flag)" + std::string(31, ' ') +
                       "[4]\n"
                       "  --cl_test_verbose  a boolean\n");
  EXPECT_EQ(usage.find('\n'), 77u);
  // A default that would pass column 80 goes on a line of its own.
  const FlagSpec long_help[] = {{"cl_test_count", "N", std::string_view(kLongHelp)}};
  EXPECT_EQ(
      FlagsUsage(long_help, 21, /*show_defaults=*/true),
      "  --cl_test_count=N  " + std::string(kLongHelp) + "\n" + std::string(74, ' ') + "[4]\n");
}

}  // namespace
}  // namespace dataecho::tools
