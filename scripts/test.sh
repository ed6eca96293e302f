#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds dataecho and runs its whole test suite:
#   1. the normal build (build/) and every test;
#   2. the Python package's pytest suite (scripts/pytest.sh, on that build);
#   3. clang-tidy on src/ and include/ (scripts/lint.sh);
#   4. the suite again under ASan+UBSan (build-asan/) and TSan (build-tsan/):
#      any sanitizer report fails its test and so the run;
#   5. a 30-second run of each fuzz target on its seed corpus (scripts/fuzz.sh).
# Every step runs every time; the first failure ends the run. Measured times
# per step (a 2-core machine) are in docs/reliability.md, "CI time".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)
start=$(date +%s)
step() { echo "== test.sh: $* (at $(($(date +%s) - start)) s)"; }

step "build and test"
# Line tables only (-g1): enough for a failing test's backtrace, and much
# less compile and link time than full debug info (-g) over 60 programs.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

step "python: pytest"
scripts/pytest.sh build

step "clang-tidy"
scripts/lint.sh build

for sanitizer in address thread; do
  step "sanitizer: $sanitizer"
  scripts/sanitize.sh "$sanitizer"
done

step "fuzz (30 s per target)"
FUZZ_SECONDS=30 scripts/fuzz.sh
step "all passed"
