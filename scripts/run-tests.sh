#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what is missing, builds
# everything (tests and benchmarks included, so they cannot rot) and runs CTest; then a
# named subset again under AddressSanitizer + UndefinedBehaviorSanitizer. Each phase's
# wall time is printed, so a CI log shows where its 30 minutes go.
set -euo pipefail
cd "$(dirname "$0")/.."
phase() {  # phase NAME COMMAND...: runs it and says how long it took
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "run-tests: $name took $((SECONDS - start)) s"
}
phase install-deps scripts/install-deps.sh
phase format scripts/check-format.sh  # one formatting rule (.clang-format); --fix rewrites
phase build scripts/build.sh build-test -DTUNESCOPE_WERROR=ON  # a new compiler warning fails CI
phase tidy scripts/check-tidy.sh build-test  # .clang-tidy over core/ and the last commit's files
ctest_all() { (cd build-test && ctest --output-on-failure -j"$(nproc)" --timeout 300); }
phase ctest ctest_all
# Separate build folder; the subset and its wall time are in the script.
phase sanitizers scripts/run-sanitizer-tests.sh build-asan
echo "run-tests: all passed in $SECONDS s"
