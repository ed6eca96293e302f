#!/usr/bin/env bash
# Builds the library and its tests with a sanitizer and runs the whole suite.
#   scripts/sanitize.sh address   # ASan + UBSan, in build-asan/
#   scripts/sanitize.sh thread    # TSan, in build-tsan/
#   scripts/sanitize.sh thread build|test   # only build, or only run the built suite
# Any report halts the test process with a non-zero status, so the test (and
# this script) fails. Benchmarks are not built (tests that need echo_bench are
# left out by the build); examples and the tool are. The code is compiled at
# -O1 with line tables only (-g1): what the sanitizers' reports need, for much
# less compile and link time than -O2 -g. TSan leaves out the single-threaded
# tests (tests/CMakeLists.txt). Compiled with clang: its instrumented builds
# take about 0.6 of GCC's compile time here (docs/reliability.md, "CI time"),
# and as a unity build (DATAECHO_UNITY_BUILD: sources compiled in batches).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: scripts/sanitize.sh address|thread [build|test]}
what=${2:-all}
# The ASan build also builds the libFuzzer targets (scripts/fuzz.sh runs them
# with FUZZ_BUILD_DIR=build-asan): only the library and the targets are
# instrumented for coverage, and no separate build compiles the library again.
case "$sanitizer" in
  address) dir=build-asan fuzz=ON ;;
  thread) dir=build-tsan fuzz=OFF ;;
  *) echo "sanitize: unknown sanitizer '$sanitizer'" >&2; exit 2 ;;
esac
jobs=${JOBS:-$(nproc)}
if [ "$what" != test ]; then
  # Ninja for a fresh tree (an existing one keeps its generator), as scripts/test.sh.
  generator=()
  [ -f "$dir/CMakeCache.txt" ] || generator=(-GNinja)
  cmake "${generator[@]}" -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DDATAECHO_SANITIZE="$sanitizer" -DDATAECHO_FUZZ="$fuzz" -DDATAECHO_BUILD_BENCHMARKS=OFF \
    -DDATAECHO_LINK_WITH_LLD=ON -DDATAECHO_UNITY_BUILD=ON >/dev/null
  cmake --build "$dir" -j"$jobs"
fi
[ "$what" != build ] || exit 0
# quarantine_size_mb=32 (default 256): freed memory is held back 32 MB deep
# before reuse, so a use after free is still caught unless 32 MB were freed
# between the free and the use. The default's quarantine keeps asking the
# kernel for fresh pages, and page faults are much of the heavier tests' time
# on the CI machines (docs/reliability.md, "CI time").
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_init_order=1:quarantine_size_mb=32"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="report_objects=0"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/cmake/tsan.supp"
ctest --test-dir "$dir" --output-on-failure -j"$jobs"
