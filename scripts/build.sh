#!/usr/bin/env bash
# Configures and builds tunescope (Release) into the folder given as $1 (default build/).
# Extra arguments go to CMake, e.g. scripts/build.sh build-portable -DTUNESCOPE_PORTABLE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
shift || true
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
