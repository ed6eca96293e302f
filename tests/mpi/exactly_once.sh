#!/usr/bin/env bash
# Runs examples/mpi_trainer on 2 and 4 ranks (record and file sharding) for two
# epochs, with echo 2, over uneven TFRecord shards, and checks from the ranks'
# dumps (--dump_fresh_indices) that each epoch trained on every record exactly
# once across the ranks, with per-rank shares balanced to one record (record
# sharding).
#   tests/mpi/exactly_once.sh build/examples/mpi_trainer/mpi_trainer build/tools/dataecho/dataecho mpiexec
set -euo pipefail
source "$(dirname "$0")/common.sh"
for np in 2 4; do
  for mode in records files; do
    dump="$tmp/dump-$np-$mode"
    mkdir "$dump"
    start=$(date +%s.%N)
    "$mpiexec" --allow-run-as-root --oversubscribe -np $np "$trainer" --train_shards="$tmp/train-*" \
      --shard_mode=$mode --epochs=2 --echo=2 --batch_size=32 --shuffle_buffer=256 \
      --test_limit=500 --eval_every=100000000 --idx_dir="$data" \
      --dump_fresh_indices="$dump" --json="$dump/result.json" >"$dump/out.txt" 2>&1 ||
      { cat "$dump/out.txt" >&2; fail "mpirun -np $np, $mode"; }
    end=$(date +%s.%N)
    [ "$(ls "$dump"/rank-*.txt | wc -l)" -eq $np ] || fail "$np dump files expected"
    dups=$(cat "$dump"/rank-*.txt | sort | uniq -d | head -3)
    [ -z "$dups" ] || fail "np $np $mode: trained twice on: $dups"
    for epoch in 0 1; do
      n=$(cat "$dump"/rank-*.txt | awk -v e=$epoch '$1 == e' | wc -l)
      [ "$n" -eq $records ] || fail "np $np $mode epoch $epoch: $n fresh rows, $records records"
      if [ $mode = records ]; then
        shares=$(for f in "$dump"/rank-*.txt; do awk -v e=$epoch '$1 == e' "$f" | wc -l; done | sort -n)
        lo=$(echo "$shares" | head -1) hi=$(echo "$shares" | tail -1)
        [ $((hi - lo)) -le 1 ] || fail "np $np epoch $epoch: shares $lo..$hi differ by more than one"
      fi
    done
    grep -q "\"ranks\": $np," "$dump/result.json" || fail "json: ranks"
    grep -q '"models_identical": true' "$dump/result.json" || fail "ranks ended with different weights"
    awk -v np=$np -v mode=$mode -v n=$records -v a="$start" -v b="$end" 'BEGIN {
      printf "mpirun -np %d, %s sharding: 2 epochs x %d records exactly once (%.1f s)\n", np, mode, n, b - a }'
  done
done
