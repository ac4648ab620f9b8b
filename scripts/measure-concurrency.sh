#!/bin/sh
# Examples/s of lenet5 and resnet18-small under the concurrency knobs (streams, async
# update, replicas), from `tunescope profile` on fake data. Not a test: the numbers depend
# on the machine and its load. Usage: scripts/measure-concurrency.sh [BUILD_DIR]
set -eu
bin="${1:-build}/tunescope"
run() {  # model batch steps knobs...
  model=$1 batch=$2 steps=$3
  shift 3
  rate=$("$bin" profile --model "$model" --data fake --batch "$batch" --fake-count $((batch * 16)) \
           --warmup 2 --steps "$steps" --threads 2 "$@" 2>/dev/null |
         sed -n 's/.*traced steps: [0-9.]* s, \([0-9.]*\) ex\/s.*/\1/p')
  printf '| %s | %s | %s | %s |\n' "$model" "$batch" "${*:-(1 stream)}" "$rate"
}
echo "| model | batch | knobs | ex/s |"
echo "|-------|------:|-------|-----:|"
for knobs in "" "--streams 2" "--async-update" "--streams 2 --async-update" "--replicas 2" "--replicas 2 --streams 2 --async-update"; do
  # shellcheck disable=SC2086
  run lenet5 64 30 $knobs
  # shellcheck disable=SC2086
  run resnet18-small 32 6 $knobs
done
