#!/usr/bin/env bash
# The cost of measuring each candidate in a child process: the same tune (lenet5, batch
# 64, nchw,nhwc x direct,gemm,fft-fftw x threads 1,2: 12 candidates) with --isolate on
# and off, interleaved in ABBA order (on, off, off, on, ...) so that a machine whose
# load drifts up or down favours neither. Prints each run's tune time ("tune took"),
# CPU time (user + sys, children included) and minor page faults, then the medians'
# ratios, as Markdown. A benchmark, not a test: numbers depend on the machine and its load.
#
# usage: bench/run-isolation-bench.sh [BUILD_DIR] [REPETITIONS]   (default: build 6)
set -euo pipefail

build=${1:-build}
repetitions=${2:-6}
cli="$build/tunescope"
[[ -x "$cli" ]] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

common=(--model lenet5 --batch 64 --layouts nchw,nhwc --algorithms direct,gemm,fft-fftw --threads-list 1,2
        --steps 10 --warmup 3 --data fake --fake-count 4096 --test-limit 64)

declare -A tune cpu
echo "| repetition | isolate | tune time (s) | CPU user+sys (s) | minor page faults |"
echo "|--:|---|--:|--:|--:|"
for ((i = 1; i <= repetitions; i++)); do
  order=(on off)
  ((i % 2 == 0)) && order=(off on)
  for isolate in "${order[@]}"; do
    /usr/bin/time -o "$work/time" -f "%U %S %R" "$cli" tune "${common[@]}" --isolate "$isolate" \
      -o "$work/tuned.json" > "$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
    t=$(sed -n 's/^tune took \([0-9.]*\) s.*/\1/p' "$work/log")
    read -r user sys faults < "$work/time"
    c=$(echo "$user + $sys" | bc)
    tune[$isolate]+="$t "
    cpu[$isolate]+="$c "
    echo "| $i | $isolate | $t | $c | $faults |"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { echo "scale=3; $(echo "$1" | median) / $(echo "$2" | median)" | bc; }
echo
echo "median tune time: on $(echo "${tune[on]}" | median) s, off $(echo "${tune[off]}" | median) s," \
     "on/off $(ratio "${tune[on]}" "${tune[off]}")x; median CPU time on/off $(ratio "${cpu[on]}" "${cpu[off]}")x;" \
     "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
