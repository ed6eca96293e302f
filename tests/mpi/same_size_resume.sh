#!/usr/bin/env bash
# A 3-rank job of examples/mpi_trainer stopped twice (at steps 25 and 45,
# checkpoints every 7 steps; steps after a checkpoint are lost as in a kill)
# and resumed on 3 ranks each time ends as the job never stopped: the same
# data_digest, final_test_accuracy, step count and accuracy curve in its
# --json, and the same rows in every rank's --dump_fresh_indices file. This
# needs every rank's pipeline state in the checkpoint (Map and Prefetch
# included); the resumes must say "the ranks' pipelines restored".
#   tests/mpi/same_size_resume.sh build/examples/mpi_trainer/mpi_trainer build/tools/dataecho/dataecho mpiexec
set -euo pipefail
source "$(dirname "$0")/common.sh"
run() {  # run OUT ARGS...
  local out=$1
  shift
  "$mpiexec" --allow-run-as-root --oversubscribe -np 3 "$trainer" --train_shards="$tmp/train-*" \
    --shard_mode=records --epochs=2 --echo=2 --batch_size=32 --shuffle_buffer=256 \
    --test_limit=500 --eval_every=1000 --idx_dir="$data" "$@" >"$out" 2>&1 ||
    { cat "$out" >&2; fail "mpirun $*"; }
}

mkdir "$tmp/ref" "$tmp/dump"
run "$tmp/ref.txt" --dump_fresh_indices="$tmp/ref" --json="$tmp/ref.json"
flags=(--dump_fresh_indices="$tmp/dump" --checkpoint_dir="$tmp/ck" --checkpoint_every=7
  --json="$tmp/out.json")
run "$tmp/a.txt" "${flags[@]}" --stop_after_steps=25
run "$tmp/b.txt" "${flags[@]}" --resume --stop_after_steps=45
run "$tmp/c.txt" "${flags[@]}" --resume
for out in b c; do
  grep -q "the ranks' pipelines restored" "$tmp/$out.txt" ||
    { cat "$tmp/$out.txt" >&2; fail "resume $out did not restore the pipelines"; }
done
expect_uninterrupted "the resumes"
echo "3 ranks stopped twice and resumed: the same digest, accuracy and rows as uninterrupted"
