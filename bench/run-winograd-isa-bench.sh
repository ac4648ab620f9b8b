#!/usr/bin/env bash
# winograd@f4 on each transform instruction-set path (TUNESCOPE_WINOGRAD_ISA), one
# bench_conv process per path, in interleaved rounds; prints a Markdown table of medians,
# the largest spread (max - min over median) and each path's time over AVX-512's.
#   bench/run-winograd-isa-bench.sh [BUILD_DIR] [ROUNDS]     (default build/, 3)
# Every path this CPU lacks is skipped (bench_conv refuses it with a usage error).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
rounds="${2:-3}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
  for isa in scalar avx2 avx512; do
    TUNESCOPE_WINOGRAD_ISA=$isa "$build/bench/bench_conv" --threads=2 --benchmark_min_time=0.2 \
      --benchmark_filter='^wino\.b128\.(s1_16x32|s3_64x8)/(nchw|nhwc)/winograd@f4/' --benchmark_format=csv \
      2>/dev/null | grep '^"wino' | sed "s/^/$isa,/" >> "$out" || true
  done
done
python3 - "$out" <<'PY'
import collections, csv, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    isa, rest = line.split(",", 1)
    f = next(csv.reader([rest]))
    rows[(f[0].replace("/real_time", ""), isa)].append(float(f[2]) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0}[f[4]])
isas = [i for i in ("scalar", "avx2", "avx512") if any(k[1] == i for k in rows)]
print("| benchmark | " + " | ".join(f"{i} ms" for i in isas) + " | spread | " + " | ".join(f"{i} / {isas[-1]}" for i in isas[:-1]) + " |")
print("|---|" + "---:|" * (2 * len(isas)) )
for name in sorted({k[0] for k in rows}):
    med = {i: statistics.median(rows[(name, i)]) for i in isas}
    spread = max((max(rows[(name, i)]) - min(rows[(name, i)])) / med[i] for i in isas)
    print(f"| {name} | " + " | ".join(f"{med[i]:.2f}" for i in isas) + f" | {100 * spread:.0f}% | "
          + " | ".join(f"{med[i] / med[isas[-1]]:.2f}x" for i in isas[:-1]) + " |")
PY
