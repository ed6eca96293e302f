// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/programs.h"

#include <sys/wait.h>

#include <cstdio>

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

}  // namespace dataecho::testing
