#!/usr/bin/env bash
# `mpi_trainer --help` lists the program's flags (not Abseil's "No flags
# matched", which it printed while its flags lived in a file not named after
# the program); an unusable --checkpoint_dir fails at the start, before any
# work (one process, no mpiexec).
#   tests/mpi/help_lists_flags.sh build/examples/mpi_trainer/mpi_trainer
set -uo pipefail
trainer=$1
out=$("$trainer" --help 2>&1)
fail() { printf 'FAIL: %s\n%s\n' "$*" "$out" >&2; exit 1; }
if grep -q "No flags matched" <<<"$out"; then fail "--help lists no flags"; fi
for flag in train_shards shard_mode batch_size echo epochs json dump_fresh_indices checkpoint_dir \
  checkpoint_every resume stop_after_steps hold_after_checkpoints; do
  grep -q -e "--$flag (" <<<"$out" || fail "--help does not list --$flag"
done
# As root a directory's permission bits do not stop a write: /sys (a
# read-only file system) stands in for an unwritable directory.
ro=/sys
if [ "$(id -u)" != 0 ]; then ro=$(mktemp -d) && chmod 555 "$ro"; fi
out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$trainer" \
  --train_shards=/nonexistent/train-* --checkpoint_dir="$ro" --checkpoint_every=2000 2>&1) &&
  fail "an unwritable --checkpoint_dir was accepted"
grep -q "checkpoint directory.* $ro" <<<"$out" || fail "the error does not name $ro"
file=$(mktemp)
out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$trainer" \
  --train_shards=/nonexistent/train-* --checkpoint_dir="$file" --resume 2>&1) &&
  fail "a regular file as --checkpoint_dir was accepted"
rm -f "$file"
grep -q "$file is not a directory" <<<"$out" || fail "the error does not say $file is not a directory"
echo "mpi_trainer --help lists its flags; an unusable --checkpoint_dir fails at the start"
