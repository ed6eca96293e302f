#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds dataecho and runs the main job:
# echo_bench on the embedded default (Fashion-MNIST as TFRecord shards served
# over loopback HTTP, upstream 6x slower than a 2 ms step). Extra arguments go
# to echo_bench (see build/tools/echo_bench/echo_bench --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target echo_bench
build/tools/echo_bench/echo_bench "$@"
