#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds dataecho and runs its whole test suite:
#   1. the normal build (build/, -O2: library, Python package, tools,
#      examples, benchmarks) and its checks (headers, docs, exported symbols,
#      the installed package, examples, the MPI trainer);
#   2. the Python package's pytest suite (scripts/pytest.sh, on that build)
#      and, beside it on one core, clang-tidy on src/ and include/
#      (scripts/lint.sh);
#   3. every test program under ASan+UBSan (build-asan/) and TSan
#      (build-tsan/): any sanitizer report fails its test and so the run.
#      (The normal build leaves the test programs out,
#      -DDATAECHO_BUILD_UNIT_TESTS=OFF: compiling them a third time, at -O2,
#      cost more than any other step.)
#   4. a 10-second run of each fuzz target on its seed corpus (scripts/fuzz.sh;
#      the targets come with the ASan+UBSan build).
# Every step runs every time; the first failure ends the run. At the end (also
# after a failure) it prints each step's wall time, so a CI log shows where the
# time went; docs/reliability.md ("CI time") has the figures of a clean run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
start=$(date +%s)
table=()
report() {
  local status=$?
  echo "== test.sh: wall time per step"
  printf '%s\n' "${table[@]}"
  printf '  %-34s %6d s\n' "total" "$(($(date +%s) - start))"
  [ "$status" -eq 0 ] && echo "== test.sh: all passed" || echo "== test.sh: FAILED (exit $status)"
}
trap report EXIT
# run NAME COMMAND...: runs one step and records its wall time (a failure ends the run).
run() {
  local name=$1 t0
  shift
  t0=$(date +%s)
  echo "== test.sh: $name (at $((t0 - start)) s)"
  if "$@"; then
    table+=("$(printf '  %-34s %6d s' "$name" "$(($(date +%s) - t0))")")
  else
    local rc=$?
    table+=("$(printf '  %-34s %6d s  FAILED' "$name" "$(($(date +%s) - t0))")")
    return "$rc"
  fi
}

# in_background OUT COMMAND: runs COMMAND (a string, split on spaces) with its
# output in the file OUT, and writes "<exit status> <wall seconds>" to OUT.rc.
in_background() {
  (
    set +e
    local s rc
    s=$(date +%s)
    $2 >"$1" 2>&1
    rc=$?
    echo "$rc $(($(date +%s) - s))" >"$1.rc"
  ) &
}
# run_beside NAME1 COMMAND1 NAME2 COMMAND2: runs two steps at once, records
# each one's wall time and prints each one's output after both ended, the
# first's first; a failure of either ends the run.
run_beside() {
  local t0 out1 out2 r1 w1 r2 w2
  t0=$(date +%s)
  echo "== test.sh: $1 and $3, side by side (at $((t0 - start)) s)"
  out1=$(mktemp) out2=$(mktemp)
  in_background "$out1" "$2"
  in_background "$out2" "$4"
  wait
  read -r r1 w1 <"$out1.rc"
  read -r r2 w2 <"$out2.rc"
  echo "== test.sh: $1 (output)"
  cat "$out1"
  echo "== test.sh: $3 (output)"
  cat "$out2"
  rm -f "$out1" "$out2" "$out1.rc" "$out2.rc"
  table+=("$(printf '  %-34s %6d s%s' "$1" "$w1" "$([ "$r1" -eq 0 ] || echo '  FAILED')")")
  table+=("$(printf '  %-34s %6d s%s' "$3" "$w2" "$([ "$r2" -eq 0 ] || echo '  FAILED')")")
  [ "$r1" -eq 0 ] || return "$r1"
  [ "$r2" -eq 0 ] || return "$r2"
}

run "setup (packages, s3rver)" scripts/setup.sh
# Line tables only (-g1): enough for a failing test's backtrace, and much
# less compile and link time than full debug info (-g) over 60 programs.
# Ninja for a fresh tree (an existing tree keeps its generator): it starts a
# target's compiles before the libraries it links are done, which make's
# per-target order does not (docs/reliability.md, "CI time").
generator() { [ -f "$1/CMakeCache.txt" ] || echo "-GNinja"; }
configure() {
  cmake $(generator build) -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DDATAECHO_BUILD_UNIT_TESTS=OFF -DDATAECHO_LINK_WITH_LLD=ON -DDATAECHO_UNITY_BUILD=ON >/dev/null
}
run "configure" configure
run "build" cmake --build build -j"$jobs"
run "ctest" ctest --test-dir build --output-on-failure -j"$jobs"
# The Python suite keeps about one core busy (its tests run one at a time;
# 1.2 cores on average), so clang-tidy runs beside it on one core: the two
# steps take about as long as the suite alone instead of both in turn.
run_beside "python: pytest" "scripts/pytest.sh build" \
  "clang-tidy (1 job, beside pytest)" "env JOBS=1 scripts/lint.sh build"
run "ASan+UBSan: build" scripts/sanitize.sh address build
run "ASan+UBSan: ctest" scripts/sanitize.sh address test
run "TSan: build" scripts/sanitize.sh thread build
run "TSan: ctest" scripts/sanitize.sh thread test
run "fuzz (10 s per target)" env FUZZ_SECONDS=10 FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh
