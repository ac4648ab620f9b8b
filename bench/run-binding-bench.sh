#!/usr/bin/env bash
# Training throughput and run-to-run spread with and without `--cpu-binding cores`, as the
# machine is and under a one-core busy loop this script starts (where binding can lose: a lane bound
# to the busy CPU cannot move away). Rounds are interleaved: each round runs every config
# with binding off, then on, so both meet the same machine. Per run: the mean ms/step of
# `tunescope profile`'s traced steps. Prints per config and load the median over the
# rounds, the min-max, and the spread (max/min - 1), off against cores as a ratio.
# Not a test: the figures depend on the machine and its load.
# Usage: bench/run-binding-bench.sh [BUILD_DIR] [ROUNDS] [LOADS]   (LOADS: "as-is busy-loop":
# the machine as it is, then with the busy loop)
set -eu
bin="${1:-build}/tunescope"
rounds="${2:-5}"
loads="${3:-as-is busy-loop}"
work=$(mktemp -d)
busy=""
stop_busy() { if [[ -n "$busy" ]]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; busy=""; fi; }
trap 'stop_busy; rm -rf "$work"' EXIT

# name | model batch steps | knobs
configs=(
  "lenet5 s2+async gemm|lenet5 64 30|--streams 2 --async-update --conv gemm --threads 2 --threads-per-lane 1"
  "lenet5 s2+async direct|lenet5 64 30|--streams 2 --async-update --conv direct --threads 2 --threads-per-lane 1"
  "lenet5 s1 gemm, 2 threads|lenet5 64 30|--conv gemm --threads 2"
  "resnet18-small s2+async gemm|resnet18-small 16 6|--streams 2 --async-update --conv gemm --threads 2 --threads-per-lane 1"
)

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) CPUs allowed: $(taskset -pc $$ | sed 's/.*: //')"
for load in $loads; do
  [[ $load == busy-loop ]] && { ( while :; do :; done ) & busy=$!; }
  echo "$load: start at load $(uptime | sed 's/.*load average: //') ($(date -u +%H:%M:%S) UTC)"
  for round in $(seq 1 "$rounds"); do
    for c in "${configs[@]}"; do
      IFS='|' read -r name sizes knobs <<< "$c"
      read -r model batch steps <<< "$sizes"
      for binding in off cores; do
        # shellcheck disable=SC2086
        ms=$("$bin" profile --model "$model" --data fake --batch "$batch" --fake-count $((batch * 16)) \
              --warmup 2 --steps "$steps" $knobs --cpu-binding "$binding" 2>/dev/null |
             sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p')
        echo "$load|$name|$binding|$ms" >> "$work/runs"
      done
    done
  done
  echo "$load: end at load $(uptime | sed 's/.*load average: //') ($(date -u +%H:%M:%S) UTC)"
  stop_busy
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
print("\n| load | config | off: median ms/step (min-max), spread | cores: median ms/step (min-max), spread | off / cores |")
print("|---|---|---:|---:|---:|")
for load in dict.fromkeys(r[0] for r in rows):
    for name in dict.fromkeys(r[1] for r in rows if r[0] == load):
        cells, med = [], {}
        for b in ("off", "cores"):
            v = [float(r[3]) for r in rows if r[0] == load and r[1] == name and r[2] == b and r[3]]
            if not v:
                cells.append("failed"); continue
            med[b] = statistics.median(v)
            cells.append(f"{med[b]:.2f} ({min(v):.2f}-{max(v):.2f}), {max(v) / min(v) - 1:.0%}")
        ratio = f"{med['off'] / med['cores']:.2f}x" if len(med) == 2 else "-"
        print(f"| {load} | {name} | {cells[0]} | {cells[1]} | {ratio} |")
PY
