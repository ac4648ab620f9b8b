#!/usr/bin/env bash
# Two builds of tunescope taking turns on the same training runs, each run labelled by how
# far apart the host has the first two CPUs right now (bench_core_distance's cache-line
# round trip just before it): for an engine change whose effect differs between the
# host's states (docs/BENCHMARKS.md, "Two threads on vCPUs the host placed far apart").
# Prints every run, then per config, build and state the median ex/s, min-max and count,
# and B / A per config and state. A run counts as "far" when its probe took more than
# FAR_RATIO (1.8) times the smallest probe of the whole session.
# Not a test: the figures depend on the machine, its load and the host.
# Usage: bench/run-pool-ab.sh BUILD_A BUILD_B [ROUNDS] [LOAD]
#   LOAD: quiet (default) | busy-loop (a one-core busy loop this script starts and stops)
#   env: MODEL (lenet5), BATCH (128), LAYOUT (nchw), CONV (direct-lanes), STEPS (400),
#        CONFIGS ("2 cores,2 off,1 off": threads and cpu_binding, comma-separated)
set -eu
a="$1/tunescope"
b="$2/tunescope"
probe="$1/bench/bench_core_distance"
rounds="${3:-10}"
load="${4:-quiet}"
model="${MODEL:-lenet5}" batch="${BATCH:-128}" layout="${LAYOUT:-nchw}"
conv="${CONV:-direct-lanes}" steps="${STEPS:-400}" far_ratio="${FAR_RATIO:-1.8}"
IFS=, read -r -a configs <<< "${CONFIGS:-2 cores,2 off,1 off}"
for tool in "$a" "$b" "$probe"; do
  [[ -x "$tool" ]] || { echo "run-pool-ab.sh: $tool is missing: build both (with -DTUNESCOPE_BUILD_BENCH=ON for the probe)" >&2; exit 2; }
done
busy=""
stop_busy() { if [[ -n "$busy" ]]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; busy=""; fi; }
runs=$(mktemp)
trap 'stop_busy; rm -f "$runs"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) CPUs, $(grep -o -m1 -w 'avx512f\|avx2' /proc/cpuinfo | head -1)"
echo "A: $a  B: $b"
echo "runs: $model batch $batch $layout conv $conv, $steps steps; load $load; start at load $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%M:%S) UTC)"
[[ $load == busy-loop ]] && { ( while :; do :; done ) & busy=$!; }
for round in $(seq 1 "$rounds"); do
  for config in "${configs[@]}"; do
    read -r threads binding <<< "$config"
    for side in A B; do
      bin=$a; [[ $side == B ]] && bin=$b
      ns=$("$probe" --probes 3 | awk '{print $4}' | sort -n | sed -n 2p)
      eps=$("$bin" profile --model "$model" --data fake --batch "$batch" --fake-count $((batch * 470)) \
              --test-limit 1 --threads "$threads" --cpu-binding "$binding" --layout "$layout" \
              --conv "$conv" --steps "$steps" --warmup 20 --top 0 2>/dev/null |
            sed -n 's/^[0-9]* traced steps: .* \([0-9.]*\) ex\/s.*/\1/p')
      echo "$round threads=$threads bind=$binding $side ${eps:-failed} probe_ns $ns" | tee -a "$runs"
    done
  done
done
stop_busy
echo "end at load $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%M:%S) UTC)"
python3 - "$runs" "$far_ratio" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
rows = [r for r in rows if r[4] != "failed"]
near_ns = min(float(r[6]) for r in rows)
far = lambda r: float(r[6]) > float(sys.argv[2]) * near_ns
groups = {}
for r in rows:
    groups.setdefault((f"{r[1]} {r[2]}", "far" if far(r) else "near", r[3]), []).append(float(r[4]))
print(f"\nsmallest probe {near_ns:.0f} ns; far: above {float(sys.argv[2]) * near_ns:.0f} ns\n")
print("| config | CPUs | A ex/s median (min-max, n) | B ex/s median (min-max, n) | B / A |")
print("|---|---|---:|---:|---:|")
for config, state in sorted({(c, s) for c, s, _ in groups}):
    cells, medians = [], []
    for side in "AB":
        v = groups.get((config, state, side), [])
        medians.append(statistics.median(v) if v else None)
        cells.append(f"{medians[-1]:.0f} ({min(v):.0f}-{max(v):.0f}, {len(v)})" if v else "-")
    ratio = f"{medians[1] / medians[0]:.2f}x" if None not in medians else "-"
    print(f"| {config} | {state} | {cells[0]} | {cells[1]} | {ratio} |")
PY
