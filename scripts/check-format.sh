#!/usr/bin/env bash
# Fails when a C++/CUDA source differs from .clang-format's rule; lists the files.
# `scripts/check-format.sh --fix` rewrites them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.hpp' '*.cpp' '*.cu' '*.cuh')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
# One clang-format for every file; it names each file that differs (one warning per change).
if ! out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  bad=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
  printf 'check-format: not formatted as .clang-format says: %s\n' $bad >&2
  echo "check-format: $(printf '%s\n' $bad | wc -l) of ${#files[@]} files; run scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
