// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// bench_main.h: what the whole-program benchmarks (arrays_bench,
// imagenet_bench, mix_bench) share around their run: the flags parsed, and an
// error reported one way, "<program>: <status>" on stderr and exit code 1.
//
//   absl::Status Run();  // measures, prints its figures as JSON
//   int main(int argc, char** argv) { return dataecho::bench::Main(argc, argv, "x_bench", Run); }
#ifndef DATAECHO_BENCHMARKS_BENCH_MAIN_H_
#define DATAECHO_BENCHMARKS_BENCH_MAIN_H_

#include <cstdio>

#include "absl/flags/parse.h"
#include "absl/status/status.h"

namespace dataecho::bench {

// Parses the command line (absl::flags), then runs `run`: 0 when it returns
// OK, else 1 after the status on stderr, named by `program`.
inline int Main(int argc, char** argv, const char* program, absl::Status (*run)()) {
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = run();
  if (status.ok()) return 0;
  std::fprintf(stderr, "%s: %s\n", program, status.ToString().c_str());
  return 1;
}

}  // namespace dataecho::bench

#endif  // DATAECHO_BENCHMARKS_BENCH_MAIN_H_
