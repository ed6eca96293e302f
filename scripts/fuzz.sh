#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ ASan/UBSan) and runs each on its
# committed seed corpus for FUZZ_SECONDS (default 25) seconds. Exits non-zero
# if a target crashes, leaks, times out or runs out of memory.
#   scripts/fuzz.sh                 # all targets
#   FUZZ_SECONDS=300 scripts/fuzz.sh tfrecord_fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-25}
build=${FUZZ_BUILD_DIR:-build-fuzz}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tfrecord_fuzz idx_fuzz jpeg_fuzz uri_fuzz s3_listing_fuzz gcs_listing_fuzz state_fuzz)
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDATAECHO_FUZZ=ON -DDATAECHO_SANITIZE=address -DDATAECHO_BUILD_TESTS=OFF \
  -DDATAECHO_BUILD_BENCHMARKS=OFF -DDATAECHO_BUILD_EXAMPLES=OFF -DDATAECHO_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" -j"${FUZZ_JOBS:-2}" --target "${targets[@]}"
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
for t in "${targets[@]}"; do
  corpus=$PWD/tests/fuzz/corpus/${t%_fuzz}
  work=$(mktemp -d)
  echo "fuzz: $t for ${seconds}s on $corpus"
  # New inputs go to $work (discarded); the committed corpus is only read.
  set +e
  "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$work" "$corpus" >"$work.log" 2>&1
  status=$?
  set -e
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY" "$work.log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$work.log"
    echo "fuzz: $t FAILED (exit $status); reproducer in $artifacts"
    rm -rf "$work" "$work.log"
    exit 1
  fi
  rm -rf "$work" "$work.log"
done
echo "fuzz: all targets passed"
