#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ ASan/UBSan) and runs each on its
# committed seed corpus for FUZZ_SECONDS (default 25) seconds. Exits non-zero
# if a target crashes, leaks, times out or runs out of memory.
#   scripts/fuzz.sh                 # all targets
#   FUZZ_SECONDS=300 scripts/fuzz.sh tfrecord_fuzz
#   FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh   # the targets of the ASan build
# FUZZ_BUILD_DIR (default build-fuzz) is configured here for the fuzz targets
# alone, unless it already has them: scripts/sanitize.sh address builds them
# with its suite (DATAECHO_FUZZ=ON), and scripts/test.sh runs them from there.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-25}
build=${FUZZ_BUILD_DIR:-build-fuzz}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tfrecord_fuzz idx_fuzz jpeg_fuzz uri_fuzz s3_listing_fuzz gcs_listing_fuzz state_fuzz sizes_fuzz checkpoint_fuzz)
if ! grep -qx 'DATAECHO_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DDATAECHO_FUZZ=ON -DDATAECHO_SANITIZE=address -DDATAECHO_BUILD_TESTS=OFF \
    -DDATAECHO_BUILD_BENCHMARKS=OFF -DDATAECHO_BUILD_EXAMPLES=OFF -DDATAECHO_BUILD_TOOLS=OFF >/dev/null
fi
cmake --build "$build" -j"${FUZZ_JOBS:-2}" --target "${targets[@]}"
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
# One target per core at a time: each libFuzzer run is a single process.
fuzz_one() {
  local t=$1 corpus=$PWD/tests/fuzz/corpus/${1%_fuzz} work status
  work=$(mktemp -d)
  # New inputs go to $work (discarded); the committed corpus is only read.
  set +e
  "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$work" "$corpus" >"$work.log" 2>&1
  status=$?
  set -e
  {
    echo "fuzz: $t for ${seconds}s on $corpus"
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY" "$work.log" || true
    if [ "$status" -ne 0 ]; then
      tail -n 60 "$work.log"
      echo "fuzz: $t FAILED (exit $status); reproducer in $artifacts"
    fi
  }
  rm -rf "$work" "$work.log"
  return "$status"
}
parallel=${FUZZ_JOBS:-$(nproc)}
failed=0
pids=()
for t in "${targets[@]}"; do
  fuzz_one "$t" >"$artifacts/$t.out" 2>&1 &
  pids+=("$!:$t")
  if [ ${#pids[@]} -ge "$parallel" ]; then
    entry=${pids[0]}; pids=("${pids[@]:1}")
    wait "${entry%%:*}" || failed=1
    cat "$artifacts/${entry#*:}.out" && rm -f "$artifacts/${entry#*:}.out"
  fi
done
for entry in "${pids[@]}"; do
  wait "${entry%%:*}" || failed=1
  cat "$artifacts/${entry#*:}.out" && rm -f "$artifacts/${entry#*:}.out"
done
[ "$failed" -eq 0 ] || { echo "fuzz: a target failed (reports above)"; exit 1; }
echo "fuzz: all targets passed"
