#!/usr/bin/env bash
# Examples/s of lenet5 and resnet18-small under the concurrency knobs (streams, async
# update, replicas), from `tunescope profile` on fake data, each beside the one-lane run
# of the same model measured in the same run. Not a test: the numbers depend on the
# machine and its load. Usage: bench/run-concurrency-bench.sh [BUILD_DIR]
set -eu
declare -A one_lane  # ex/s of the first (one-lane) run per model: the peer of its rows
bin="${1:-build}/tunescope"
run() {  # model batch steps knobs...
  model=$1 batch=$2 steps=$3
  shift 3
  rate=$("$bin" profile --model "$model" --data fake --batch "$batch" --fake-count $((batch * 16)) \
           --warmup 2 --steps "$steps" --threads 2 "$@" 2>/dev/null |
         sed -n 's/.*traced steps: [0-9.]* s, \([0-9.]*\) ex\/s.*/\1/p')
  one_lane[$model]=${one_lane[$model]:-$rate}
  ratio=$(awk -v a="$rate" -v b="${one_lane[$model]}" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
  printf '| %s | %s | %s | %s | %s |\n' "$model" "$batch" "${*:-(1 stream)}" "$rate" "$ratio"
}
echo "| model | batch | knobs | ex/s | vs 1 stream |"
echo "|-------|------:|-------|-----:|-----:|"
for knobs in "" "--streams 2" "--async-update" "--streams 2 --async-update" "--replicas 2" "--replicas 2 --streams 2 --async-update"; do
  # shellcheck disable=SC2086
  run lenet5 64 30 $knobs
  # shellcheck disable=SC2086
  run resnet18-small 32 6 $knobs
done
