#!/usr/bin/env bash
# Builds what the Python tests need in BUILD_DIR (the dataecho_python extension
# and the C++ reference program of tests/python/) and runs the pytest suite
# with the interpreter CMake built the package for.
#   scripts/pytest.sh [BUILD_DIR] [pytest arguments...]     (default: build)
# The build dir must be configured (scripts/test.sh does it). Fails if the
# package was not configured (python3-dev or pybind11-dev missing): the suite
# must not pass by running nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [ -z "$python" ] || ! grep -qw dataecho_python <(cmake --build "$build" --target help 2>/dev/null); then
  echo "pytest: $build has no Python package target (scripts/setup.sh installs python3-dev and pybind11-dev)" >&2
  exit 2
fi
cmake --build "$build" -j"${JOBS:-$(nproc)}" --target dataecho_python python_reference_pipeline
# -p no:cacheprovider: no .pytest_cache in the source tree.
PYTHONPATH="$PWD/$build/python" DATAECHO_BUILD_DIR="$PWD/$build" \
  "$python" -m pytest -p no:cacheprovider -q tests/python "$@"
