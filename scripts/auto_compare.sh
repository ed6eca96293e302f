#!/usr/bin/env bash
# Runs the comparison of docs/results.md ("Auto placement against each fixed
# placement"): fashion_mnist_trainer over throttled HTTP at R = 4, with
# --insert=auto against each fixed placement, with the default augmentation
# and with a CPU-heavy one, for each seed, one run at a time; then prints a
# table of the fresh examples and the wall clock to the target accuracy per
# placement (means over the seeds that reached it) from the runs' JSONs.
#
#   scripts/auto_compare.sh build/examples/fashion_mnist_trainer
#   scripts/auto_compare.sh --step_ms=10 --seeds="1 2 3" build/examples/fashion_mnist_trainer
#   scripts/auto_compare.sh --table_only --out=/tmp/auto_cmp     # the table of finished runs
#
# Options, before the trainer:
#   --step_ms=MS          the step time R = 4 refers to (default 25): the
#                         throttle delivers a batch of fresh examples every
#                         4 x MS. Shorter is faster, but the regime holds only
#                         while the trainer's own step (its compute, measured
#                         in every run) is about MS: the table shows the R
#                         each run had against its own step and warns when it
#                         is more than 20 % off 4.
#   --seeds="1 2 3"       seeds (default 1 2 3)
#   --augment_cpu_ms="0 0.5"  the regimes: CPU each augmentation burns, in ms
#                         (0: the default crop and flip, I/O-bound; 0.5: CPU-heavy)
#   --echo="2 3"          the fixed placements' factors (default 3): each fixed
#                         placement runs at each
#   --max_echo=4          auto's largest factor (default 4)
#   --placements="..."    what to run (default "before_augment after_augment
#                         batch auto"; auto-progress: auto with --prefer=progress;
#                         auto-loss: auto with --report_loss, the trainer's
#                         per-row losses fed back to the planner)
#   --fresh_budget=N      stop after N fresh examples (default 600000)
#   --eval_every=N        evaluate every N fresh examples (default 20000)
#   --target=ACC          the target accuracy (default 0.85)
#   --out=DIR             one JSON per run (default /tmp/auto_cmp); runs whose
#                         JSON is there are not run again (the comparison can
#                         be resumed); DIR/params names the settings they ran with
#   --shards=PREFIX       TFRecord shards PREFIX-*.tfrecord (default
#                         /tmp/fmnist/train), made with `dataecho convert` if absent
#   --dataecho=PATH       the dataecho CLI that makes them (default: next to the
#                         trainer, ../tools/dataecho/dataecho)
#   --nice=N              niceness of the trainers (default 0)
#   --trainer_args="..."  more flags for every run, e.g. "--batch_size=1024
#                         --learning_rate=0.05" (a setting the gains were not
#                         measured on)
#   --table_only          print the table of the JSONs in --out, run nothing
set -euo pipefail
STEP_MS=25
SEEDS="1 2 3"
AUGS="0 0.5"
ECHO=3
MAX_ECHO=4
BUDGET=600000
EVAL_EVERY=20000
TARGET=0.85
OUT=/tmp/auto_cmp
SHARDS=/tmp/fmnist/train
DATAECHO=""
NICE=0
TABLE_ONLY=0
TRAINER_ARGS=""
RATIO=4
PLACEMENTS="before_augment after_augment batch auto"
while [ $# -gt 0 ]; do
  case "$1" in
    --step_ms=*) STEP_MS=${1#*=} ;;
    --seeds=*) SEEDS=${1#*=} ;;
    --augment_cpu_ms=*) AUGS=${1#*=} ;;
    --echo=*) ECHO=${1#*=} ;;
    --max_echo=*) MAX_ECHO=${1#*=} ;;
    --placements=*) PLACEMENTS=${1#*=} ;;
    --fresh_budget=*) BUDGET=${1#*=} ;;
    --eval_every=*) EVAL_EVERY=${1#*=} ;;
    --target=*) TARGET=${1#*=} ;;
    --out=*) OUT=${1#*=} ;;
    --shards=*) SHARDS=${1#*=} ;;
    --dataecho=*) DATAECHO=${1#*=} ;;
    --nice=*) NICE=${1#*=} ;;
    --trainer_args=*) TRAINER_ARGS=${1#*=} ;;
    --table_only) TABLE_ONLY=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "auto_compare.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done

mkdir -p "$OUT"
PARAMS="ratio=$RATIO step_ms=$STEP_MS echo=$ECHO max_echo=$MAX_ECHO fresh_budget=$BUDGET"
PARAMS="$PARAMS eval_every=$EVAL_EVERY target=$TARGET"
[ -n "$TRAINER_ARGS" ] && PARAMS="$PARAMS trainer_args=$TRAINER_ARGS"

if [ "$TABLE_ONLY" = 0 ]; then
  TRAINER=${1:?"usage: auto_compare.sh [options] path/to/fashion_mnist_trainer (try --help)"}
  [ -x "$TRAINER" ] || { echo "auto_compare.sh: $TRAINER is not an executable" >&2; exit 2; }
  # Runs of other settings must not be mixed into one table.
  if [ -s "$OUT/params" ] && [ "$(cat "$OUT/params")" != "$PARAMS" ]; then
    echo "auto_compare.sh: $OUT holds runs made with: $(cat "$OUT/params")" >&2
    echo "  (these settings: $PARAMS); give another --out" >&2
    exit 2
  fi
  echo "$PARAMS" > "$OUT/params"
  if ! compgen -G "$SHARDS-*.tfrecord" > /dev/null; then
    [ -n "$DATAECHO" ] || DATAECHO="$(dirname "$TRAINER")/../tools/dataecho/dataecho"
    [ -x "$DATAECHO" ] || { echo "auto_compare.sh: no shards $SHARDS-*.tfrecord and no dataecho CLI at $DATAECHO (--dataecho=)" >&2; exit 2; }
    mkdir -p "$(dirname "$SHARDS")"
    "$DATAECHO" convert --images=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
      --labels=/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz \
      --output="$SHARDS" --shards=4
  fi
  run() {  # insert aug seed [factor]
    local f="$OUT/$1-aug$2-s$3.json"
    [ -n "${4:-}" ] && f="$OUT/$1-e$4-aug$2-s$3.json"
    [ -s "$f" ] && return 0
    local insert=$1 echo_flags=(--echo="${4:-1}")
    [ "$1" = auto-progress ] && insert=auto
    [ "$1" = auto-loss ] && insert=auto
    [ "$insert" = auto ] && echo_flags=(--max_echo="$MAX_ECHO")
    [ "$1" = auto-progress ] && echo_flags+=(--prefer=progress)
    [ "$1" = auto-loss ] && echo_flags+=(--report_loss)
    echo "== $insert ${echo_flags[*]} --augment_cpu_ms=$2 --seed=$3" >&2
    nice -n "$NICE" "$TRAINER" --train_shards="$SHARDS-*.tfrecord" --upstream_ratio="$RATIO" \
      --step_ms="$STEP_MS" --insert="$insert" "${echo_flags[@]}" --augment_cpu_ms="$2" --seed="$3" \
      --stop_at_target --target_accuracy="$TARGET" --fresh_budget="$BUDGET" \
      --eval_every="$EVAL_EVERY" --no_progress --json="$f.tmp" $TRAINER_ARGS >&2
    mv "$f.tmp" "$f"
  }
  # Seed by seed, every placement in turn: a partial comparison has whole seeds.
  for aug in $AUGS; do
    for seed in $SEEDS; do
      for insert in $PLACEMENTS; do
        case "$insert" in
          auto*) run "$insert" "$aug" "$seed" ;;
          *) for e in $ECHO; do run "$insert" "$aug" "$seed" "$e"; done ;;
        esac
      done
    done
  done
fi

python3 - "$OUT" "$RATIO" "$STEP_MS" "$TARGET" "$AUGS" "$PLACEMENTS" "$ECHO" <<'PY'
import glob
import json
import os
import re
import statistics
import sys

out, ratio, step_ms, target = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
augs, echos = sys.argv[5].split(), sys.argv[7].split()
# Fixed placements run at each factor, named INSERT-eE; auto ones once.
placements = [p if p.startswith("auto") else f"{p}-e{e}" for p in sys.argv[6].split()
              for e in ([None] if p.startswith("auto") else echos)]
runs = {}
for path in glob.glob(os.path.join(out, "*-aug*-s*.json")):
    m = re.match(r"(.+)-aug(.+)-s(\d+)\.json$", os.path.basename(path))
    if not m:
        continue
    with open(path) as f:
        runs.setdefault((m.group(1), float(m.group(2))), []).append(json.load(f))


def mean(xs):
    return statistics.mean(xs) if xs else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


print(f"\nfashion_mnist_trainer, upstream R = {ratio:g} x {step_ms:g} ms, to {target}: "
      "means over the seeds that reached it")
print("| augment_cpu_ms | placement | seeds reaching | fresh examples | wall clock (s) | "
      "realized factor | waited for data | trainer step (ms) | R against it |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
off = []
best = {}  # aug -> {"fixed": (seconds, name), "auto": [(seconds, name)]}
for aug in augs:
    for insert in placements:
        rs = runs.get((insert, float(aug)), [])
        if not rs:
            continue
        hit = [r for r in rs if r.get("fresh_examples_to_target") is not None]
        # The trainer's own step: its time outside the pipeline's Next().
        steps = [1e3 * (r["seconds_total"] - r["data_wait_seconds"]) / r["steps_total"]
                 for r in rs if r.get("steps_total")]
        step = mean(steps)
        waited = mean([r["data_wait_seconds"] / r["seconds_total"] for r in rs
                       if r.get("seconds_total")])
        r_eff = ratio * step_ms / step if step else None
        if r_eff is not None and not 0.8 * ratio <= r_eff <= 1.25 * ratio:
            off.append((aug, insert, r_eff))
        auto = insert.startswith("auto")
        name = insert if auto else f"{insert.rsplit('-e', 1)[0]}, e = {rs[0]['echo']:g}"
        if auto and rs[0].get("max_echo") is not None:
            name = f"{insert}, e <= {rs[0]['max_echo']:g}"
        seconds = mean([r['seconds_to_target'] for r in hit]) if len(hit) == len(rs) else None
        if seconds is not None:
            b = best.setdefault(aug, {"fixed": None, "auto": []})
            if auto:
                b["auto"].append((seconds, name))
            elif b["fixed"] is None or seconds < b["fixed"][0]:
                b["fixed"] = (seconds, name)
        print(f"| {aug} | {name} | {len(hit)}/{len(rs)} "
              f"| {fmt(mean([r['fresh_examples_to_target'] for r in hit]), ',.0f')} "
              f"| {fmt(mean([r['seconds_to_target'] for r in hit]), '.1f')} "
              f"| {fmt(mean([r['realized_echo_factor'] for r in rs]), '.2f')} "
              f"| {fmt(waited, '.0%')} "
              f"| {fmt(step, '.2f')} | {fmt(r_eff, '.1f')} |")
for aug, b in best.items():
    for seconds, name in b["auto"]:
        if b["fixed"] is not None:
            print(f"augment_cpu_ms={aug}: {name} / best fixed ({b['fixed'][1]}, "
                  f"{b['fixed'][0]:.1f} s) wall clock to {target}: {seconds / b['fixed'][0]:.2f}x")
for aug, insert, r_eff in off:
    print(f"warning: augment_cpu_ms={aug} {insert}: the upstream was R = {r_eff:.1f} times "
          f"slower than the trainer's own step, not {ratio:g}: "
          + ("raise --step_ms to about that step" if r_eff < ratio else
             "--step_ms is longer than that step; lower it toward it"), file=sys.stderr)
PY
