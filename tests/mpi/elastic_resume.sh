#!/usr/bin/env bash
# A job of examples/mpi_trainer that checkpoints, is stopped and resumed on
# another number of ranks twice (4 ranks -> 3 -> 5) over two epochs with echo
# 2: from the ranks' dumps (--dump_fresh_indices, cut back to the checkpoint at
# each resume) every record of each epoch is trained on exactly once across the
# three runs, the first epoch interrupted twice. Then: --resume with an empty
# checkpoint directory starts fresh, and a damaged newest checkpoint is skipped
# with a warning for the one before.
#   tests/mpi/elastic_resume.sh build/examples/mpi_trainer/mpi_trainer build/tools/dataecho/dataecho mpiexec
set -euo pipefail
source "$(dirname "$0")/common.sh"
run() {  # run NP OUT ARGS...: one job; its output in OUT
  local np=$1 out=$2
  shift 2
  "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" "$trainer" --train_shards="$tmp/train-*" \
    --shard_mode=records --epochs=2 --echo=2 --batch_size=32 --shuffle_buffer=256 \
    --test_limit=500 --eval_every=100000000 --idx_dir="$data" "$@" >"$out" 2>&1 ||
    { cat "$out" >&2; fail "mpirun -np $np $*"; }
}
check_once() {  # check_once DUMP: every record of epochs 0 and 1 once
  local dump=$1
  dups=$(cat "$dump"/rank-*.txt | sort | uniq -d | head -3)
  [ -z "$dups" ] || fail "trained twice on: $dups"
  for epoch in 0 1; do
    n=$(cat "$dump"/rank-*.txt | awk -v e=$epoch '$1 == e' | wc -l)
    [ "$n" -eq $records ] || fail "epoch $epoch: $n fresh rows, $records records"
  done
}

# 4 ranks, checkpoints every 7 steps, stopped at step 25 (checkpoint of step
# 21 mid-epoch: ~64 fresh rows a step); 3 ranks from it, stopped at step 45
# (checkpoint 42, still in epoch 0); 5 ranks from that to the end.
ck="$tmp/ck" dump="$tmp/dump"
mkdir "$dump"
flags=(--dump_fresh_indices="$dump" --checkpoint_dir="$ck" --checkpoint_every=7)
run 4 "$tmp/a.txt" "${flags[@]}" --stop_after_steps=25
[ -f "$ck/ckpt-000000000021.dtc" ] || fail "no checkpoint of step 21: $(ls "$ck")"
[ "$(ls "$ck" | grep -c "^ckpt-")" -eq 2 ] || fail "the last two checkpoints kept: $(ls "$ck")"
run 3 "$tmp/b.txt" "${flags[@]}" --resume --stop_after_steps=45
grep -q "ckpt-000000000021.dtc (step 21, written by 4 ranks, now 3; the epochs' rest re-planned)" "$tmp/b.txt" ||
  { cat "$tmp/b.txt" >&2; fail "4 -> 3: not resumed from step 21"; }
fresh=$(cat "$dump"/rank-*.txt | wc -l)
[ "$fresh" -lt $records ] || fail "the second stop is not in epoch 0 ($fresh fresh rows)"
run 5 "$tmp/c.txt" "${flags[@]}" --resume --json="$tmp/c.json"
grep -q "ckpt-000000000042.dtc (step 42, written by 3 ranks, now 5; the epochs' rest re-planned)" "$tmp/c.txt" ||
  { cat "$tmp/c.txt" >&2; fail "3 -> 5: not resumed from step 42"; }
check_once "$dump"
[ "$(ls "$dump"/rank-*.txt | wc -l)" -eq 5 ] || fail "5 dump files expected"
grep -q '"ranks": 5,' "$tmp/c.json" || fail "json: ranks"
grep -q '"models_identical": true' "$tmp/c.json" || fail "ranks ended with different weights"
grep -q "\"fresh_examples_total\": $((2 * records))," "$tmp/c.json" || fail "json: fresh rows"
echo "4 -> 3 -> 5 ranks: 2 epochs x $records records exactly once"

# --resume with an empty directory starts fresh (and trains both epochs).
mkdir "$tmp/empty" "$tmp/dump2"
run 2 "$tmp/d.txt" --dump_fresh_indices="$tmp/dump2" --checkpoint_dir="$tmp/empty" --resume
grep -q "resumed from" "$tmp/d.txt" && fail "resumed from an empty directory"
check_once "$tmp/dump2"

# A damaged newest checkpoint: a warning naming it, the one before used.
newest=$(ls "$ck"/ckpt-*.dtc | tail -1) previous=$(ls "$ck"/ckpt-*.dtc | head -1)
printf '\xff' | dd of="$newest" bs=1 seek=100 conv=notrunc status=none
rm -rf "$dump" && mkdir "$dump"
run 2 "$tmp/e.txt" --dump_fresh_indices="$dump" --checkpoint_dir="$ck" --resume
grep -q "warning: checkpoint $newest: CRC-32C" "$tmp/e.txt" ||
  { cat "$tmp/e.txt" >&2; fail "no warning about the damaged $newest"; }
grep -q "resumed from $previous" "$tmp/e.txt" || fail "not resumed from $previous"
echo "empty directory: fresh start; damaged newest checkpoint: the previous one"
