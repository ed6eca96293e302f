#!/usr/bin/env bash
# Runs the Fashion-MNIST echo sweep of docs/results.md: e = 1, 1.5, 2, 3, 4 at
# each insertion point, for each seed, one JSON per run in OUT (runs already
# there are skipped, so the sweep can be resumed).
#
#   scripts/echo_sweep.sh build/examples/fashion_mnist_trainer results "1 2 3" 600000
set -euo pipefail
TRAINER=${1:?trainer binary}
OUT=${2:?output directory}
SEEDS=${3:-"1 2 3"}
BUDGET=${4:-600000}
mkdir -p "$OUT"
run() {  # insert echo seed
  local f="$OUT/$1_e$2_s$3.json"
  [ -s "$f" ] && return 0
  nice -n 10 "$TRAINER" --insert="$1" --echo="$2" --seed="$3" --fresh_budget="$BUDGET" \
    --eval_every=20000 --target_accuracy=0.85 --learning_rate=0.02 --momentum=0.9 \
    --batch_size=128 --shuffle_buffer=2048 --no_progress --json="$f.tmp" | tee -a "$OUT/log.txt"
  mv "$f.tmp" "$f"
}
# Order: the baselines, example echoing before augmentation for every seed,
# then the other two insertion points seed by seed, so that a partial sweep
# has at least one seed of everything.
for seed in $SEEDS; do run before_augment 1 "$seed"; done
for seed in $SEEDS; do
  for e in 2 4 1.5 3; do run before_augment "$e" "$seed"; done
done
for seed in $SEEDS; do
  for insert in after_augment batch; do
    for e in 2 4 1.5 3; do run "$insert" "$e" "$seed"; done
  done
done
