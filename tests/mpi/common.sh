# Sourced by the MPI trainer's job tests (tests/mpi/*.sh), after `set -euo
# pipefail` and with their arguments (TRAINER CLI MPIEXEC ...): names them
# ($trainer, $cli, $mpiexec), makes $tmp (removed at exit, with Open MPI's
# session files in $tmp/mpi), writes $records Fashion-MNIST training images
# as 5 TFRecord shards $tmp/train-*, and gives fail, field and
# expect_uninterrupted. A test that needs more at exit sets `on_exit` (a
# command) before it sources this file.
trainer=$1 cli=$2 mpiexec=$3
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
records=3001
tmp=$(mktemp -d)
mkdir "$tmp/mpi"
export TMPDIR="$tmp/mpi"
trap 'eval "${on_exit:-}"; rm -rf "$tmp"' EXIT
"$cli" convert --images="$data/train-images-idx3-ubyte.gz" --labels="$data/train-labels-idx1-ubyte.gz" \
  --output="$tmp/train" --shards=5 --limit=$records >/dev/null

# fail WHY: ends the test (a test may redefine it to say more).
fail() { echo "FAIL ($*)" >&2; exit 1; }
# field NAME FILE: the `"NAME": value` of a --json report.
field() { grep -o "\"$1\": [^,]*" "$2"; }
# expect_uninterrupted WHAT: the job's $tmp/out.json and rank dumps $tmp/dump
# are the uninterrupted job's ($tmp/ref.json, $tmp/ref): the same digest,
# accuracy, step and fresh counts, accuracy curve and rows on each of 3 ranks.
expect_uninterrupted() {
  local f r
  for f in data_digest final_test_accuracy steps_total fresh_examples_total; do
    [ "$(field $f "$tmp/out.json")" = "$(field $f "$tmp/ref.json")" ] ||
      fail "$f: $(field $f "$tmp/out.json") after $1, $(field $f "$tmp/ref.json") uninterrupted"
  done
  [ "$(grep -o '"curve": \[[^]]*\]' "$tmp/out.json")" = "$(grep -o '"curve": \[[^]]*\]' "$tmp/ref.json")" ] ||
    fail "another accuracy curve"
  for r in 0 1 2; do
    cmp -s "$tmp/dump/rank-$r.txt" "$tmp/ref/rank-$r.txt" || fail "rank $r trained on other rows"
  done
}
