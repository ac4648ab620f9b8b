#!/usr/bin/env bash
# Fusion in the trace: interleaved `tunescope profile` runs of resnet18-small with fuse on
# and off, for each config given, then the convolution / elementwise shares and the
# elementwise kernels' rates (bench/elementwise-share.py) per config and fuse setting:
#   bench/run-fusion-bench.sh BUILD_DIR OUT_DIR ROUNDS BANDWIDTH_GBS CONFIG_ARGS...
# CONFIG_ARGS are quoted flag strings, e.g. "--layout nhwc --conv gemm" "--config best.json".
# Each run: --batch 128 --data fake --warmup 1 --steps 3 --threads 2, its trace kept.
set -euo pipefail
build=${1:?usage: bench/run-fusion-bench.sh BUILD_DIR OUT_DIR ROUNDS BANDWIDTH_GBS CONFIG_ARGS...}
out=${2:?OUT_DIR}
rounds=${3:?ROUNDS}
bandwidth=${4:?BANDWIDTH_GBS}
shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
configs=("$@")
runs=()
for c in "${!configs[@]}"; do runs+=("$c on" "$c off"); done
echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; r++)); do
  n=${#runs[@]}
  for ((k = 0; k < n; k++)); do
    read -r c fuse <<< "${runs[$(((k + r) % n))]}"  # rotate who goes first
    # shellcheck disable=SC2086
    rate=$("$build/tunescope" profile --model resnet18-small --batch 128 --data fake --fake-count 512 \
      --test-limit 1 --warmup 1 --steps 3 --threads 2 ${configs[$c]} --fuse="$fuse" \
      --trace "$out/c$c-$fuse-r$r.json" | sed -n 's/^3 traced steps: .* s, \([0-9.]*\) ex\/s.*/\1/p')
    echo "round $r config $c fuse=$fuse: $rate ex/s"
    echo "$rate" >> "$out/c$c-$fuse.rates"
  done
done
echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${!configs[@]}"; do
  for fuse in off on; do
    echo
    echo "config $c (${configs[$c]}) fuse=$fuse: ex/s $(sort -n "$out/c$c-$fuse.rates" | tr '\n' ' ')"
    python3 "$here/elementwise-share.py" --bandwidth "$bandwidth" --label "config $c fuse=$fuse" "$out"/c$c-$fuse-r*.json
  done
done
