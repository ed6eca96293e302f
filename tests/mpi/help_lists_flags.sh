#!/usr/bin/env bash
# `mpi_trainer --help` lists the program's flags (not Abseil's "No flags
# matched", which it printed while its flags lived in a file not named after
# the program).
#   tests/mpi/help_lists_flags.sh build/examples/mpi_trainer/mpi_trainer
set -uo pipefail
trainer=$1
out=$("$trainer" --help 2>&1)
fail() { printf 'FAIL: %s\n%s\n' "$*" "$out" >&2; exit 1; }
if grep -q "No flags matched" <<<"$out"; then fail "--help lists no flags"; fi
for flag in train_shards shard_mode batch_size echo epochs json dump_fresh_indices checkpoint_dir \
  checkpoint_every resume stop_after_steps; do
  grep -q -e "--$flag (" <<<"$out" || fail "--help does not list --$flag"
done
echo "mpi_trainer --help lists its flags"
