#!/usr/bin/env bash
# Training throughput of both models, both layouts, each CPU conv algorithm: the
# figures the tuner has to beat. Prints a Markdown table for docs/BENCHMARKS.md.
#   bench/run-training-bench.sh [BUILD_DIR]      (default build/)
# LeNet-5: one epoch of Fashion-MNIST (train + test). ResNet-18-small: batch 128 of fake
# 3x32x32 data, 1 warm-up + 3 timed steps (`tunescope profile`).
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${1:-build}/tunescope"
threads="${THREADS:-$(nproc)}"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, $threads threads"
echo
# The peer of every row is the first row of its table (nchw + direct), measured in the same run.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
echo "| model | layout | conv | epoch s | ex/s | vs nchw direct | test acc % |"
echo "|---|---|---|---:|---:|---:|---:|"
base=""
for layout in nchw nhwc; do
  for conv in direct gemm fft-fftw fft-own; do
    out=$("$cli" train --model lenet5 --data fashion-mnist --epochs 1 --layout "$layout" \
          --conv "$conv" --threads "$threads" 2>/dev/null | grep '^epoch 1:')
    secs=$(sed -E 's/^epoch 1: ([0-9.]+) s.*/\1/' <<<"$out")
    rate=$(sed -E 's/.*s, ([0-9.]+) ex\/s.*/\1/' <<<"$out")
    acc=$(sed -E 's/.*test loss [0-9.]+  acc ([0-9.]+)%.*/\1/' <<<"$out")
    base=${base:-$rate}
    echo "| lenet5 | $layout | $conv | $secs | $rate | $(ratio "$rate" "$base") | $acc |"
  done
done
echo
echo "| model | layout | conv | ms/step | ex/s | vs nchw direct |"
echo "|---|---|---|---:|---:|---:|"
base=""
# FFT convolution computes the whole stride-1 output, and winograd runs 3x3 stride-1
# layers only, so the stride-2 convs and 1x1 projections run gemm in the FFT and winograd
# rows (the tuner would pick so too).
strided="s2b1.conv1=gemm,s3b1.conv1=gemm,s4b1.conv1=gemm,s2b1.proj=gemm,s3b1.proj=gemm,s4b1.proj=gemm"
for layout in nchw nhwc; do
  for conv in direct gemm "fft-fftw,$strided" "fft-own,$strided" "winograd,$strided"; do
    out=$("$cli" profile --model resnet18-small --data fake --batch 128 --fake-count 1024 \
          --warmup 1 --steps 3 --layout "$layout" --conv "$conv" --threads "$threads" 2>/dev/null \
          | grep 'traced steps:')
    rate=$(sed -E 's/.*s, ([0-9.]+) ex\/s.*/\1/' <<<"$out")
    ms=$(sed -E 's/.*ex\/s, ([0-9.]+) ms\/step.*/\1/' <<<"$out")
    base=${base:-$rate}
    echo "| resnet18-small | $layout | ${conv%%,*} | $ms | $rate | $(ratio "$rate" "$base") |"
  done
done
