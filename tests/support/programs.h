// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Running the project's programs from tests (the dataecho tool, echo_bench,
// the example trainer): a shell command, its exit code and what it printed.
//
//   ProgramRun r = RunShell(fmt::format("'{}' stat x.tfrecord", DATAECHO_TOOL_PATH),
//                           dir.File("stderr.txt"));
//   EXPECT_EQ(r.exit_code, 0) << r.err;
#ifndef DATAECHO_TESTS_SUPPORT_PROGRAMS_H_
#define DATAECHO_TESTS_SUPPORT_PROGRAMS_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace dataecho::testing {

struct ProgramRun {
  int exit_code = -1;  // -1: ended by a signal, or could not start
  std::string out;     // its standard output (and its standard error, without err_path)
  std::string err;     // its standard error, with err_path
};

// Runs the shell command `cmd` (sh -c) and waits for it. With `err_path`, the
// command's standard error goes to that file and comes back in `err`;
// without, it is merged into `out` (2>&1).
ProgramRun RunShell(const std::string& cmd, const std::string& err_path = "");

// Arguments a program must refuse, and a part of the usage error it prints.
struct UsageCase {
  std::string args;
  std::string message;
};

// Whether `r` is a usage error: exit status 2, and `message` in what it
// printed (out or err). On failure it says what ran instead:
//   EXPECT_TRUE(IsUsageError(RunShell(cmd), "--rank needs --world_size")) << cmd;
::testing::AssertionResult IsUsageError(const ProgramRun& r, std::string_view message);

// Starts the program `path` with `args` (no shell) in the background, its
// standard output and error appended to the file `log`: its process id, for
// waitpid() or kill(). The child exits 127 if the log or the program cannot
// be opened.
pid_t StartProgram(const std::string& path, const std::vector<std::string>& args,
                   const std::string& log);

// The checkpoint files ("ckpt-*", not a writer's ".ckpt-*" temporaries) a
// trainer wrote into `dir`, oldest first.
std::vector<std::string> CheckpointFiles(const std::string& dir);

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_PROGRAMS_H_
