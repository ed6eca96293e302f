#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds dataecho and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target quickstart
build/examples/quickstart "$@"
