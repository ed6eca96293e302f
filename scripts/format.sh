#!/usr/bin/env bash
# Formats every C++ file git tracks with clang-format (.clang-format: Google
# style, 100 columns). scripts/lint.sh checks the same files.
#   scripts/format.sh            # rewrite in place
#   scripts/format.sh --check    # list what would change; exit 1 if anything would
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format)
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--check" ]; then
  "$fmt" --dry-run --Werror "${files[@]}"
  echo "format: clang-format clean on ${#files[@]} files"
else
  "$fmt" -i "${files[@]}"
fi
