#!/usr/bin/env bash
# What including dataecho costs a user's program: compiles
# benchmarks/compile/readme_pipeline.cc (the README's pipeline: TFRecord source,
# parallel decode Map, Prefetch, Echo, crop Map, Shuffle, FP16 Batch, Prefetch)
# against an installed dataecho, and benchmarks/compile/reference.cc (the same
# Abseil and standard headers, no dataecho), alternating, ROUNDS times each;
# prints each one's median CPU time (user + sys), peak compiler memory, and
# the ratio of the medians.
#   cmake --install build --prefix /tmp/dataecho-prefix
#   benchmarks/compile_time.sh /tmp/dataecho-prefix [-O3] [ROUNDS=5]
# Run it on a quiet machine (../shared/tools/quiet benchmarks/compile_time.sh ...):
# CPU time is steadier than wall time, but not immune to a shared machine.
set -euo pipefail
prefix=${1:?usage: benchmarks/compile_time.sh PREFIX [OPT] [ROUNDS]}
opt=${2:--O3}
rounds=${3:-5}
dir="$(cd "$(dirname "$0")" && pwd)/compile"
cflags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig" \
  pkg-config --cflags dataecho)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Compiles `name`.cc `rounds` times, the two programs alternating, and keeps
# "CPU-seconds peak-KB" per compile in $out/<name>.
compile() {
  # shellcheck disable=SC2086  # cflags is a list of flags
  /usr/bin/time -f "%U %S %M" -o "$out/time" "${CXX:-g++}" -std=c++20 "$opt" $cflags -c \
    "$dir/$1.cc" -o "$out/$1.o"
  read -r user sys rss <"$out/time"
  awk -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN { printf "%.2f %d\n", u + s, m }' >>"$out/$1"
}
for ((i = 0; i < rounds; i++)); do
  compile readme_pipeline
  compile reference
done
median() { sort -n "$out/$1" | sed -n "$(((rounds + 1) / 2))p" | cut -d' ' -f1; }
report() {
  sort -n "$out/$1" >"$out/sorted"
  echo "$1.cc, ${CXX:-g++} $opt: median $(median "$1") s CPU" \
    "(min $(head -n1 "$out/sorted" | cut -d' ' -f1), max $(tail -n1 "$out/sorted" | cut -d' ' -f1)," \
    "$rounds rounds), peak $(($(cut -d' ' -f2 "$out/sorted" | sort -n | tail -n1) / 1024)) MB of compiler memory"
}
report readme_pipeline
report reference
awk -v a="$(median readme_pipeline)" -v b="$(median reference)" \
  'BEGIN { printf "readme_pipeline / reference (Abseil and the standard library alone): %.2fx\n", a / b }'
