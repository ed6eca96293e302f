// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/programs.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "fmt/format.h"
#include "support/temp_files.h"

namespace dataecho::testing {

ProgramRun RunShell(const std::string& cmd, const std::string& err_path) {
  ProgramRun r;
  const std::string full =
      err_path.empty() ? cmd + " 2>&1" : fmt::format("{} 2>'{}'", cmd, err_path);
  FILE* p = popen(full.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!err_path.empty()) r.err = ReadFileOrDie(err_path);
  return r;
}

::testing::AssertionResult IsUsageError(const ProgramRun& r, std::string_view message) {
  if (r.exit_code == 2 &&
      (r.out.find(message) != std::string::npos || r.err.find(message) != std::string::npos)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "exit status " << r.exit_code << ", not 2 with \"" << message << "\"; it printed:\n"
         << r.out << r.err;
}

pid_t StartProgram(const std::string& path, const std::vector<std::string>& args,
                   const std::string& log) {
  // The argument vector is built before fork(): the child only redirects and
  // execs.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::fopen(log.c_str(), "a");
    if (out == nullptr) _exit(127);
    dup2(fileno(out), STDOUT_FILENO);
    dup2(fileno(out), STDERR_FILENO);
    execv(path.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

std::vector<std::string> CheckpointFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("ckpt-")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace dataecho::testing
