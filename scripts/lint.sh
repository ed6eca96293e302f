#!/usr/bin/env bash
# Checks that every C++ file is clang-format clean (.clang-format), then runs
# clang-tidy (checks in .clang-tidy, warnings are errors) on src/ and on
# every public header in include/dataecho/. BUILD_DIR is a build of the
# library with a compilation database (CMAKE_EXPORT_COMPILE_COMMANDS): its
# units are checked as compiled, and its dependency files say which headers
# src/ includes.
#   scripts/lint.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${JOBS:-$(nproc)}
scripts/format.sh --check
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
if [ ! -d "$build/CMakeFiles/dataecho.dir" ]; then
  echo "lint: $build is not a build of the library (build it first)" >&2
  exit 2
fi
# clang-tidy checks a header through the sources that include it
# (HeaderFilterRegex). A public header no source file includes (a template
# only tests use, the umbrella header) gets a translation unit of its own. The
# build's dependencies say which headers src/ includes; without them every
# header gets its own unit.
headers_dir="$build/lint"
rm -rf "$headers_dir" && mkdir -p "$headers_dir"
# The library's units as the build compiled them: with DATAECHO_UNITY_BUILD
# each unit is a batch of src/ files (diagnostics in them are reported:
# HeaderFilterRegex covers src/), parsed once instead of once a file, which
# took the step from ~210 s to ~50 s on 2 cores (docs/reliability.md, "CI
# time"). Only the library's entries: a unit outside the database (a
# header's) borrows a neighbour's flags.
if [ ! -f "$build/compile_commands.json" ]; then
  echo "lint: $build has no compile_commands.json (configure it with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi
mapfile -t files < <(python3 - "$build/compile_commands.json" "$headers_dir/compile_commands.json" <<'PY'
import json, sys
entries = [e for e in json.load(open(sys.argv[1])) if "CMakeFiles/dataecho.dir/" in e["command"]]
json.dump(entries, open(sys.argv[2], "w"))
print("\n".join(sorted(e["file"] for e in entries)))
PY
)
# The headers the library's units include: from ninja's log of them (a Ninja
# tree keeps no dependency files), else from make's *.o.d files.
library_deps() {
  if [ -f "$build/build.ninja" ]; then
    (cd "$build" && ninja -t deps) |
      awk '/^[^ \t]/ { keep = index($0, "CMakeFiles/dataecho.dir/") > 0; next } keep && NF { print $1 }'
  else
    find "$build/CMakeFiles/dataecho.dir" -name '*.o.d' -print0 2>/dev/null | xargs -0 -r cat | tr ' \\' '\n\n'
  fi
}
included=$(library_deps | grep -o 'include/dataecho/.*\.h$' | sed 's|^include/||' | sort -u || true)
for h in $(cd include && find dataecho -name '*.h' | sort); do
  grep -qxF "$h" <<<"$included" && continue
  tu="$headers_dir/$(echo "${h#dataecho/}" | tr / _ | sed 's/\.h$//')_header.cc"
  printf '#include "%s"\n' "$h" >"$tu"
  files+=("$tu")
done
log="$build/lint/clang-tidy.log"
# Headers' units are not in the compilation database: give them the flags.
# The static analyzer runs in its shallow mode (small functions inlined into
# their callers, fewer paths per function): it still follows a null or a
# leak through a helper, and the run takes half the time; in the default deep
# mode the analyzer alone was more than half of this step, mostly inside the
# standard library's and Abseil's templates.
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -n 1 \
  "$tidy" -p "$headers_dir" --quiet --extra-arg=-std=c++20 --extra-arg=-I"$PWD/include" --extra-arg=-I"$PWD/src" \
  --extra-arg=-Xclang --extra-arg=-analyzer-config --extra-arg=-Xclang --extra-arg=mode=shallow >"$log" 2>&1 \
  || { grep -E "(error|warning):" "$log" | sort -u; echo "lint: clang-tidy failed (full log: $log)" >&2; exit 1; }
echo "lint: clang-tidy clean on ${#files[@]} units (src/ and the headers through them)"
