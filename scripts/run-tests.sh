#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what is missing, builds
# everything (tests and benchmarks included, so they cannot rot) and runs CTest; then a
# named subset again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/check-format.sh  # one formatting rule (.clang-format); --fix rewrites
scripts/build.sh build-test -DTUNESCOPE_WERROR=ON  # a new compiler warning fails CI
scripts/check-tidy.sh build-test  # .clang-tidy over core/ and the last commit's files
(cd build-test && ctest --output-on-failure -j"$(nproc)" --timeout 300)
# Separate build folder; the subset and its wall time are in the script.
scripts/run-sanitizer-tests.sh build-asan
