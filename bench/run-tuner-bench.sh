#!/usr/bin/env bash
# Compares the tuner's strategies on a space small enough to exhaust (lenet5, layouts
# nchw,nhwc x every CPU conv algorithm x threads 1,2): wall time of each strategy and
# the ex/s of its pick against exhaustive's pick. Prints a Markdown table. A benchmark,
# not a test: numbers depend on the machine and its load.
#
# usage: bench/run-tuner-bench.sh [BUILD_DIR] [DATA]   (DATA: fake (default) | fashion-mnist)
set -euo pipefail

build=${1:-build}
data=${2:-fake}
cli="$build/tunescope"
[[ -x "$cli" ]] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $data == fake ]]; then
  data_args=(--data fake --fake-count 4096 --test-limit 64)
else
  data_args=(--data "$data" --train-limit 4096 --test-limit 64)
fi
common=(--model lenet5 --batch 64 --layouts nchw,nhwc --algorithms direct,gemm,fft-fftw --threads-list 1,2
        --steps 10 --warmup 3 "${data_args[@]}")

declare -A seconds pick eps
for strategy in exhaustive per-layer; do
  start=$(date +%s.%N)
  "$cli" tune "${common[@]}" --strategy "$strategy" -o "$work/$strategy.json" > "$work/$strategy.log" 2>&1 \
    || { cat "$work/$strategy.log" >&2; exit 1; }
  seconds[$strategy]=$(echo "$(date +%s.%N) - $start" | bc)
  pick[$strategy]=$(sed -n 's/^winner: \(.*\), [0-9.]* ex\/s.*/\1/p' "$work/$strategy.log")
done

# Each pick is re-measured the same way afterwards (30 traced steps of `profile
# --config`), so the comparison does not rest on either tune's own figures.
measure() {  # config.json -> ex/s
  "$cli" profile --config "$1" "${data_args[@]}" --warmup 3 --steps 30 2>/dev/null \
    | sed -n 's/^30 traced steps: [0-9.]* s, \([0-9.]*\) ex\/s.*/\1/p'
}
for strategy in exhaustive per-layer; do eps[$strategy]=$(measure "$work/$strategy.json"); done

echo "| strategy | tune wall time (s) | cost vs exhaustive | pick | pick ex/s (30 steps) | vs exhaustive's pick |"
echo "|----------|-------------------:|-------------------:|------|---------------------:|---------------------:|"
for strategy in exhaustive per-layer; do
  printf "| %s | %.1f | %.2fx | %s | %.0f | %.2fx |\n" "$strategy" "${seconds[$strategy]}" \
    "$(echo "${seconds[$strategy]} / ${seconds[exhaustive]}" | bc -l)" "${pick[$strategy]}" "${eps[$strategy]}" \
    "$(echo "${eps[$strategy]} / ${eps[exhaustive]}" | bc -l)"
done
