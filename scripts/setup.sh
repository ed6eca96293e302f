#!/usr/bin/env bash
# Installs the Debian packages dataecho needs, if any are missing. Safe to run repeatedly.
# (libopenblas0-pthread: NumPy and PyTorch use Debian's reference BLAS without it, on which
# the Python tests' small torch model trains about 20x slower. lld: scripts/test.sh's
# builds link with it, ~3x faster than GNU ld for the ~80 test programs of each.)
set -euo pipefail
PACKAGES=(build-essential cmake pkg-config git
  libabsl-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libcurl4-openssl-dev libturbojpeg0-dev libjpeg-dev libmicrohttpd-dev libpng-dev
  dataset-fashion-mnist python3-skimage curl nodejs npm clang
  clang-tidy clang-format libclang-rt-14-dev lld ninja-build
  libopenmpi-dev openmpi-bin
  python3-dev pybind11-dev python3-numpy python3-torch python3-torchvision python3-pytest
  python3-pip python3-venv
  libopenblas0-pthread)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs from another repository may bundle npm; accept any working npm.
if [ ${#missing[@]} -gt 0 ] && command -v npm >/dev/null; then
  filtered=(); for p in "${missing[@]}"; do [ "$p" = npm ] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The S3 emulator the storage tests run (npm s3rver), in a project-local folder.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/tests/s3rver/node_modules/.bin/s3rver" ]; then
  echo "setup: installing s3rver into tests/s3rver"
  npm install --prefix "$root/tests/s3rver" --no-audit --no-fund --loglevel=error
fi
