#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bug-finding and performance checks, warnings are errors)
# over the sources compiled in BUILD_DIR's compile_commands.json.
#   scripts/check-tidy.sh BUILD_DIR          core/ and the C++ files the last commit changed
#   scripts/check-tidy.sh BUILD_DIR --all    every compiled source (slow: ~5 s per file)
#   scripts/check-tidy.sh BUILD_DIR FILE...  the named files
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check-tidy.sh BUILD_DIR [--all | FILE...]}
shift
[ -f "$build/compile_commands.json" ] ||
  { echo "check-tidy: $build/compile_commands.json is missing (configure the build first)" >&2; exit 2; }
root=$(pwd)
if [ "${1:-}" = "--all" ]; then
  pattern="^$root/(core|profiler|cli|kernels|models|gui|bench|tests)/"
else
  if [ $# -gt 0 ]; then files=("$@"); else
    mapfile -t files < <(git diff --name-only HEAD~1 HEAD -- '*.cpp' 2>/dev/null || true)
    files+=(core/)
  fi
  # One alternation of escaped paths: run-clang-tidy takes a regex over the database's files.
  pattern="^$root/($(printf '%s\n' "${files[@]}" | sed 's/[.+]/\\&/g' | paste -sd'|'))"
fi
# The test programs build in unity batches; tidy reads each source with its batch's command.
log=$(mktemp)
db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
python3 scripts/compile-db-per-source.py "$build" "$db"
# GCC-only warning flags in the compile commands are not clang's business.
if ! run-clang-tidy -p "$db" -j "$(nproc)" -quiet \
    -extra-arg=-Wno-unknown-warning-option "$pattern" >"$log" 2>&1; then
  sed "s/\x1b\[[0-9;]*m//g" "$log" | grep -E "(warning|error): " | sort -u >&2 || cat "$log" >&2
  echo "check-tidy: clang-tidy found problems (see .clang-tidy)" >&2
  exit 1
fi
echo "check-tidy: $(grep -c '^clang-tidy' "$log") files clean"
