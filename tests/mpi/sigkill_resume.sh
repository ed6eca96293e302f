#!/usr/bin/env bash
# A 3-rank job of examples/mpi_trainer killed with SIGKILL -- mpirun and every
# rank at once -- three times at random moments (each a random 0-10 ms after a
# new checkpoint appears, or as soon as a checkpoint's temporary file does:
# during a step, a checkpoint write, the removal of an old checkpoint) and
# started again with the same command line and --resume ends as the job never
# killed: the same data_digest, final_test_accuracy, step and fresh counts and
# accuracy curve in its --json, and the same rows in every rank's
# --dump_fresh_indices file. Rank 0 alone writes the job's checkpoint (one file
# holding every rank's pipeline state) and sends the newest complete one to all
# ranks at a resume, so the ranks always resume from the same step; every
# resume must say so ("the ranks' pipelines restored"). The kill moments come
# from a seed printed on failure (SIGKILL_SEED=N repeats them). A run to be
# killed is started with --hold_after_checkpoints=2: it waits after its second
# checkpoint, so however slowly this script sees the checkpoints (a busy
# machine), the job cannot end before its kill and each run makes progress.
# With a fourth argument `auto` the job runs --insert=auto, whose planners
# decide from timing: a resume replays the decisions its checkpoint carries and
# then decides afresh, so the digest, steps and curve are not compared; what
# must hold is every record fresh exactly once per epoch across the ranks and
# the kills (the dumped rows, sorted, are the uninterrupted job's) and the same
# count of fresh examples.
#   tests/mpi/sigkill_resume.sh build/examples/mpi_trainer/mpi_trainer build/tools/dataecho/dataecho mpiexec [auto]
set -euo pipefail
mode=${4:-fixed}
seed=${SIGKILL_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
RANDOM=$seed
job_pids=()
on_exit='[ ${#job_pids[@]} -eq 0 ] || kill -KILL "${job_pids[@]}" 2>/dev/null || true'
source "$(dirname "$0")/common.sh"
fail() { echo "FAIL ($*; kill moments of seed $seed)" >&2; exit 1; }
echo_args=(--echo=2)
[ "$mode" = auto ] && echo_args=(--insert=auto --echo=1)
args=(--allow-run-as-root --oversubscribe -np 3 "$trainer" --train_shards="$tmp/train-*"
  --shard_mode=records --epochs=2 "${echo_args[@]}" --batch_size=32 --shuffle_buffer=256
  --test_limit=500 --eval_every=1000 --idx_dir="$data")
# The pids of $1 and of all its descendants.
tree() {
  local pid=$1 child
  echo "$pid"
  for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do tree "$child"; done
}
# Whether process $1 runs (exists and is not a zombie).
alive() {
  local state
  { read -r _ _ state _ <"/proc/$1/stat"; } 2>/dev/null && [ "$state" != Z ]
}
# How many checkpoints in the directory are newer than $before (by name: the
# step, zero-padded).
new_checkpoints() {
  local n=0 f
  for f in "$tmp"/ck/ckpt-*.dtc; do
    [ -e "$f" ] && [[ "${f##*/}" > "$before" ]] && n=$((n + 1))
  done
  echo $n
}

mkdir "$tmp/ref" "$tmp/dump"
"$mpiexec" "${args[@]}" --dump_fresh_indices="$tmp/ref" --json="$tmp/ref.json" >"$tmp/ref.txt" 2>&1 ||
  { cat "$tmp/ref.txt" >&2; fail "the uninterrupted job"; }
flags=(--dump_fresh_indices="$tmp/dump" --checkpoint_dir="$tmp/ck" --checkpoint_every=7
  --resume --json="$tmp/out.json")

kills=0 starts=0
while [ $kills -lt 3 ]; do
  files=("$tmp"/ck/ckpt-*.dtc)
  before=""
  [ -e "${files[0]}" ] && before=$(basename "${files[-1]}")
  starts=$((starts + 1))
  "$mpiexec" "${args[@]}" "${flags[@]}" --hold_after_checkpoints=2 >"$tmp/run-$starts.txt" 2>&1 &
  job=$!
  # Even kills: a random 0-10 ms after a new checkpoint appears; odd ones:
  # after a first new checkpoint (so that each run makes progress), as soon as
  # a checkpoint's temporary file is seen, or a second new checkpoint (where
  # the run holds).
  at_temp=$((kills % 2))
  ended=0
  while true; do
    if ! alive "$job"; then ended=1; break; fi
    fresh=$(new_checkpoints)
    if [ "$fresh" -ge 1 ]; then
      [ $at_temp -eq 0 ] && break
      [ "$fresh" -ge 2 ] && break  # the run holds here
      temps=("$tmp"/ck/.ckpt-*)
      [ -e "${temps[0]}" ] && break
    else
      sleep 0.002
    fi
  done
  if [ $ended -eq 1 ]; then
    wait "$job" || true
    cat "$tmp/run-$starts.txt" >&2
    fail "run $starts ended before its kill, though it holds after its second checkpoint"
  fi
  [ $at_temp -eq 0 ] && sleep "0.00$((RANDOM % 10))"
  mapfile -t job_pids < <(tree "$job")
  kill -KILL "${job_pids[@]}" 2>/dev/null || true
  wait "$job" 2>/dev/null || true
  for pid in "${job_pids[@]}"; do  # every rank gone before the next start
    for _ in $(seq 500); do alive "$pid" || break; sleep 0.01; done
    alive "$pid" && fail "process $pid of the killed job still runs"
  done
  job_pids=()
  kills=$((kills + 1))
done
starts=$((starts + 1))
"$mpiexec" "${args[@]}" "${flags[@]}" >"$tmp/run-$starts.txt" 2>&1 ||
  { cat "$tmp/run-$starts.txt" >&2; fail "the last resume"; }
for i in $(seq 2 $starts); do
  grep -q "the ranks' pipelines restored" "$tmp/run-$i.txt" ||
    { cat "$tmp/run-$i.txt" >&2; fail "start $i did not restore the ranks' pipelines"; }
  grep -o "resumed from .*/\(ckpt-[0-9]*\.dtc\)" "$tmp/run-$i.txt" | sed "s|.*/|start $i: resumed from |"
done
n=$(find "$tmp/ck" -name 'ckpt-*.dtc' | wc -l)
[ "$n" -le 2 ] || fail "$n checkpoints kept, at most 2 expected"
if [ "$mode" = auto ]; then
  [ "$(field fresh_examples_total "$tmp/out.json")" = "$(field fresh_examples_total "$tmp/ref.json")" ] ||
    fail "fresh_examples_total: $(field fresh_examples_total "$tmp/out.json") after $kills kills"
  cmp -s <(sort "$tmp"/dump/rank-*.txt) <(sort "$tmp"/ref/rank-*.txt) ||
    fail "the ranks' fresh rows are not the uninterrupted job's (a record lost or twice)"
  echo "3 ranks (auto placement) killed $kills times (seed $seed) and resumed: every record fresh once per epoch"
  exit 0
fi
expect_uninterrupted "$kills kills"
echo "3 ranks killed $kills times (seed $seed) and resumed: the same digest, accuracy and rows as uninterrupted"
