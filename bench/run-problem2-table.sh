#!/usr/bin/env bash
# Problem 2 of docs/ARCHITECTURE.md reproduced on Fashion-MNIST: LeNet-5 trained EPOCHS epochs with
# spatial convolution (direct) and with FFT convolution (FFTW's transforms and ours), each
# FFT under both workspace policies: mean epoch time, test accuracy after the last epoch,
# and the conv memory (workspace + cached spectra) of the policy. Prints a Markdown table.
#   bench/run-problem2-table.sh [BUILD_DIR] [EPOCHS]      (defaults: build, 3)
# The peer of every row is the direct row, measured in the same run. A benchmark, not a
# test: the times depend on the machine and its load.
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${1:-build}/tunescope"
epochs="${2:-3}"
threads="${THREADS:-$(nproc)}"
[[ -x "$cli" ]] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, $threads threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| conv | fft_workspace | mean epoch s | speed vs direct | test acc % after $epochs epochs | conv memory MiB (workspace + cached spectra) |"
echo "|---|---|---:|---:|---:|---|"
base=""
for run in "direct reuse" "fft-fftw reuse" "fft-fftw cache" "fft-own reuse" "fft-own cache"; do
  set -- $run
  out=$("$cli" train --model lenet5 --data fashion-mnist --epochs "$epochs" --conv "$1" --fft-workspace "$2" \
        --threads "$threads" 2>/dev/null)
  mean=$(grep '^epoch ' <<<"$out" | sed -E 's/^epoch [0-9]+: ([0-9.]+) s.*/\1/' | awk '{ t += $1 } END { printf "%.2f", t / NR }')
  acc=$(grep "^epoch $epochs:" <<<"$out" | sed -E 's/.*test loss [0-9.]+  acc ([0-9.]+)%.*/\1/')
  memory=$(sed -nE 's/^conv memory ([0-9.]+) MiB \(workspace ([0-9.]+) MiB \+ cached spectra ([0-9.]+) MiB.*/\1 (\2 + \3)/p' <<<"$out")
  base=${base:-$mean}
  policy=$([[ $1 == direct ]] && echo "-" || echo "$2")
  echo "| $1 | $policy | $mean | $(awk -v a="$base" -v b="$mean" 'BEGIN { printf "%.2fx", a / b }') | $acc | $memory |"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
