#!/usr/bin/env bash
# Runs the Fashion-MNIST echo sweep of docs/results.md: e = 1, 1.5, 2, 3, 4 at
# each insertion point, for each seed, one JSON per run in OUT (runs already
# there are skipped, so the sweep can be resumed).
#
#   scripts/echo_sweep.sh build/examples/fashion_mnist_trainer results "1 2 3" 600000
#
# Options, before the positional arguments:
#   --eval_every=N        evaluate every N fresh examples (default 20000)
#   --runs="INSERT:E ..." only these runs, e.g. "before_augment:1 before_augment:2"
#                         (default: the whole grid, in the order below)
#   --jobs=N              trainers running at a time (default 1)
#   --nice=N              niceness of the trainers (default 10)
#
#   scripts/echo_sweep.sh --eval_every=10000 --runs="before_augment:1 before_augment:2" \
#       --jobs=2 --nice=19 build/examples/fashion_mnist_trainer results-10seeds \
#       "1 2 3 4 5 6 7 8 9 10" 600000
set -euo pipefail
EVAL_EVERY=20000
RUNS=""
JOBS=1
NICE=10
while [ $# -gt 0 ]; do
  case "$1" in
    --eval_every=*) EVAL_EVERY=${1#*=} ;;
    --runs=*) RUNS=${1#*=} ;;
    --jobs=*) JOBS=${1#*=} ;;
    --nice=*) NICE=${1#*=} ;;
    --*) echo "unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
TRAINER=${1:?trainer binary}
OUT=${2:?output directory}
SEEDS=${3:-"1 2 3"}
BUDGET=${4:-600000}
mkdir -p "$OUT"
run() {  # insert echo seed
  local f="$OUT/$1_e$2_s$3.json"
  [ -s "$f" ] && return 0
  nice -n "$NICE" "$TRAINER" --insert="$1" --echo="$2" --seed="$3" --fresh_budget="$BUDGET" \
    --eval_every="$EVAL_EVERY" --target_accuracy=0.85 --learning_rate=0.02 --momentum=0.9 \
    --batch_size=128 --shuffle_buffer=2048 --no_progress --json="$f.tmp" > "$f.log"
  mv "$f.tmp" "$f"
  # One run's output at a time, whole, even when runs overlap.
  flock "$OUT/log.txt" tee -a "$OUT/log.txt" < "$f.log"
  rm -f "$f.log"
}
# The runs in order: the baselines, example echoing before augmentation for
# every seed, then the other two insertion points seed by seed, so that a
# partial sweep has at least one seed of everything.
list() {
  if [ -n "$RUNS" ]; then
    for seed in $SEEDS; do
      for r in $RUNS; do echo "${r%%:*} ${r#*:} $seed"; done
    done
    return
  fi
  for seed in $SEEDS; do echo "before_augment 1 $seed"; done
  for seed in $SEEDS; do
    for e in 2 4 1.5 3; do echo "before_augment $e $seed"; done
  done
  for seed in $SEEDS; do
    for insert in after_augment batch; do
      for e in 2 4 1.5 3; do echo "$insert $e $seed"; done
    done
  done
}
running=0
failed=0
while read -r insert e seed; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run "$insert" "$e" "$seed" &
  running=$((running + 1))
done < <(list)
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"
