#!/usr/bin/env bash
# The main job on a fresh Debian machine: installs what is missing, builds, tunes
# LeNet-5 training on Fashion-MNIST on this CPU (layout x conv algorithm x threads x CPU binding, every
# candidate checked for numerics before it is timed), then trains one epoch with the
# tuned config and prints throughput and test accuracy.
# Outputs go to out/: tuned.json, results.sqlite, traces/{best,baseline}.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build -DTUNESCOPE_BUILD_TESTS=OFF -DTUNESCOPE_BUILD_BENCH=OFF -DTUNESCOPE_BUILD_GUI=OFF
mkdir -p out
threads=$(seq -s, 1 "$(nproc)")
build/tunescope tune --model lenet5 --data fashion-mnist --batch 128 --threads-list "$threads" \
  --steps 8 --warmup 2 --db out/results.sqlite --trace-dir out/traces -o out/tuned.json
build/tunescope train --config out/tuned.json --epochs 1
