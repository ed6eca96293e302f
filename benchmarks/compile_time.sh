#!/usr/bin/env bash
# What including dataecho costs a user's program: compiles
# benchmarks/compile/readme_pipeline.cc (the README's pipeline: TFRecord source,
# parallel decode Map, Prefetch, Echo, crop Map, Shuffle, FP16 Batch, Prefetch)
# against an installed dataecho, ROUNDS times, and prints the median CPU time
# (user + sys) and the peak compiler memory of one compile.
#   cmake --install build --prefix /tmp/dataecho-prefix
#   benchmarks/compile_time.sh /tmp/dataecho-prefix [-O3] [ROUNDS=5]
# Run it on a quiet machine (../shared/tools/quiet benchmarks/compile_time.sh ...):
# CPU time is steadier than wall time, but not immune to a shared machine.
set -euo pipefail
prefix=${1:?usage: benchmarks/compile_time.sh PREFIX [OPT] [ROUNDS]}
opt=${2:--O3}
rounds=${3:-5}
src="$(cd "$(dirname "$0")" && pwd)/compile/readme_pipeline.cc"
cflags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig" \
  pkg-config --cflags dataecho)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 0; i < rounds; i++)); do
  # shellcheck disable=SC2086  # cflags is a list of flags
  /usr/bin/time -f "%U %S %M" -o "$out/time" "${CXX:-g++}" -std=c++20 "$opt" $cflags -c "$src" \
    -o "$out/readme_pipeline.o"
  read -r user sys rss <"$out/time"
  echo "$user $sys $rss" >>"$out/all"
done
awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$out/all" | sort -n >"$out/sorted"
median=$(sed -n "$(((rounds + 1) / 2))p" "$out/sorted" | cut -d' ' -f1)
echo "readme_pipeline.cc, ${CXX:-g++} $opt: median $median s CPU" \
  "(min $(head -n1 "$out/sorted" | cut -d' ' -f1), max $(tail -n1 "$out/sorted" | cut -d' ' -f1)," \
  "$rounds rounds), peak $(($(cut -d' ' -f2 "$out/sorted" | sort -n | tail -n1) / 1024)) MB of compiler memory"
