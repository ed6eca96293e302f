#!/usr/bin/env bash
# Runs the whole ctest suite N times, in a random order each time, beside a
# busy core, and reports every test that failed with how often: a test that
# depends on the scheduler shows up here long before it fails CI.
#   scripts/stress.sh [N]                        # build/ (a build with the test programs)
#   DATAECHO_SANITIZE=thread scripts/stress.sh 5 # build-tsan/ (scripts/sanitize.sh thread build)
# Environment: STRESS_BUILD_DIR (the tree to run; default build/, or
# build-<sanitizer> with DATAECHO_SANITIZE), STRESS_JOBS (ctest -j, default 2),
# STRESS_BUSY (busy loops beside the suite, default 1; each `nice -n 19`),
# STRESS_REGEX (ctest -R, default every test), STRESS_LOG_DIR (where each
# run's ctest output goes; default a new directory under /tmp).
# Not part of scripts/test.sh: N runs of the suite cost N times its time.
# Exits non-zero if any run had a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
sanitize=${DATAECHO_SANITIZE:-}
case "$sanitize" in
  "") dir=${STRESS_BUILD_DIR:-build} ;;
  address) dir=${STRESS_BUILD_DIR:-build-asan} ;;
  thread) dir=${STRESS_BUILD_DIR:-build-tsan} ;;
  *) echo "stress: unknown DATAECHO_SANITIZE '$sanitize' (address|thread)" >&2; exit 2 ;;
esac
jobs=${STRESS_JOBS:-2}
busy=${STRESS_BUSY:-1}
regex=${STRESS_REGEX:-}
logs=${STRESS_LOG_DIR:-$(mktemp -d /tmp/dataecho-stress.XXXXXX)}
mkdir -p "$logs"
if [ ! -f "$dir/CTestTestfile.cmake" ]; then
  echo "stress: $dir has no ctest tree (build it first: the test programs need" \
    "-DDATAECHO_BUILD_UNIT_TESTS=ON, or scripts/sanitize.sh $sanitize build)" >&2
  exit 2
fi
# The sanitizers' options, as scripts/sanitize.sh sets them.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_init_order=1:quarantine_size_mb=32"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="report_objects=0"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/cmake/tsan.supp"

# The busy loops, and each ctest run in a process group of its own (setsid):
# stopped with the script, also when it is interrupted mid-run, test
# processes included.
busy_pids=()
ctest_pid=
stop_busy() {
  for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${busy_pids[@]}"; do wait "$pid" 2>/dev/null; done
  busy_pids=()
}
stop_all() {
  [ -n "$ctest_pid" ] && kill -- "-$ctest_pid" 2>/dev/null
  stop_busy
}
trap stop_all EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < busy; ++i)); do
  nice -n 19 bash -c 'while :; do :; done' &
  busy_pids+=("$!")
done

echo "stress: $runs runs of ctest -j$jobs --schedule-random in $dir" \
  "${sanitize:+(DATAECHO_SANITIZE=$sanitize) }beside $busy nice -n 19 busy loop(s); logs in $logs"
declare -A failed=()
failed_runs=0
for ((run = 1; run <= runs; ++run)); do
  log="$logs/run-$run.log"
  t0=$(date +%s)
  args=(--test-dir "$dir" -j"$jobs" --schedule-random --output-on-failure)
  [ -n "$regex" ] && args+=(-R "$regex")
  setsid ctest "${args[@]}" >"$log" 2>&1 &
  ctest_pid=$!
  wait "$ctest_pid"
  rc=$?
  ctest_pid=
  # ctest's summary lists each failed test as "  <n> - <name> (Failed|Timeout|...)".
  names=$(sed -n '/tests failed out of/,$p' "$log" | sed -n 's/^[[:space:]]*[0-9]\+ - \(.*\) (\(.*\))[[:space:]]*$/\1 (\2)/p')
  summary=$(grep -m1 -E 'tests passed, [0-9]+ tests failed out of' "$log" || grep -m1 'tests passed' "$log")
  echo "stress: run $run/$runs: $(($(date +%s) - t0)) s, ${summary:-no summary (exit $rc)}"
  if [ "$rc" -ne 0 ]; then
    failed_runs=$((failed_runs + 1))
    [ -z "$names" ] && names="(ctest exit $rc, no test named: see $log)"
    while IFS= read -r name; do
      [ -z "$name" ] && continue
      failed[$name]=$((${failed[$name]:-0} + 1))
      echo "stress:   failed: $name"
    done <<<"$names"
  fi
done
stop_busy

echo "stress: $((runs - failed_runs)) of $runs runs passed"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "stress: failures by test (count of $runs runs):"
  for name in "${!failed[@]}"; do printf '  %3d  %s\n' "${failed[$name]}" "$name"; done | sort -rn
  exit 1
fi
echo "stress: no test failed"
