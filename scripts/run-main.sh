#!/usr/bin/env bash
# The main job on a fresh Debian machine: installs what is missing, builds, and trains
# LeNet-5 on Fashion-MNIST for one epoch, printing throughput and test accuracy.
# Extra arguments go to `tunescope train` (e.g. --layout nhwc --conv direct).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build -DTUNESCOPE_BUILD_TESTS=OFF -DTUNESCOPE_BUILD_BENCH=OFF
exec build/tunescope train --model lenet5 --data fashion-mnist --epochs 1 --conv gemm "$@"
