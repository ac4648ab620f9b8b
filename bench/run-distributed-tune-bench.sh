#!/usr/bin/env bash
# Distributed tuning (issue 22 item 4): the wall time of `mpirun -np 2 tunescope tune`
# (the candidates spread over 2 ranks, each pinned to a core of its own) against a
# 1-rank tune of the same space (`mpirun -np 1`, pinned to one core), and the winner
# each picks. The space holds only 1-thread candidates, so that a rank's candidate runs
# on its core alone: on a 2-core machine two ranks measuring at once would otherwise
# share the cores. Interleaved rounds (the order alternates), a fresh DB per tune; prints
# each tune's wall time, winner and its ex/s, then the medians and their ratio.
#
# Usage: bench/run-distributed-tune-bench.sh [BUILD_DIR] [ROUNDS] [lenet5|resnet18-small]
# (lenet5: 10 candidates of a few ms a step, a tune of seconds, where starting the ranks
# weighs; resnet18-small: 6 candidates of about 0.1 s a step)
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
model=${3:-lenet5}
cli="$build/tunescope"
[ -x "$cli" ] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
case $model in
  lenet5) space="--model lenet5 --data fake --fake-count 4096 --batch 64 --layouts nchw,nhwc
  --algorithms direct,direct-small,gemm,winograd,fft-own --threads-list 1 --strategy exhaustive
  --steps 5 --max-timing-seconds 3" ;;
  resnet18-small) space="--model resnet18-small --data fake --fake-count 512 --batch 16 --layouts nchw,nhwc
  --algorithms direct,gemm,winograd --threads-list 1 --strategy exhaustive
  --steps 5 --max-timing-seconds 3" ;;
  *) echo "model: lenet5 or resnet18-small, got '$model'" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load before: $(uptime)"
grep -m1 "model name" /proc/cpuinfo
for ((round = 0; round < rounds; ++round)); do
  order=(2 1)
  ((round % 2 == 1)) && order=(1 2)
  for ranks in "${order[@]}"; do
    rm -f "$out/tune.db"
    start=$(date +%s.%N)
    mpirun --bind-to core -np "$ranks" "$cli" tune $space --db "$out/tune.db" \
      -o "$out/tuned.json" > "$out/tune.txt" 2>&1 || { cat "$out/tune.txt" >&2; exit 1; }
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    winner=$(sed -n 's/^winner: \(.*\), \([0-9.]*\) ex\/s.*/\1|\2/p' "$out/tune.txt")
    echo "$ranks $wall $winner" | tee -a "$out/all.txt"
  done
done
echo "load after: $(uptime)"
python3 - "$out/all.txt" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split(" ", 2) for line in open(sys.argv[1])]
walls = {r: [float(x[1]) for x in rows if x[0] == r] for r in ("1", "2")}
m1, m2 = statistics.median(walls["1"]), statistics.median(walls["2"])
print("| tune | median wall s | min..max | ratio to 1 rank |")
print("|---|---|---|---|")
for r, m in (("1", m1), ("2", m2)):
    w = walls[r]
    print(f"| {r} rank{'s' if r == '2' else ''} | {m:.1f} | {min(w):.1f}..{max(w):.1f} | {m / m1:.2f} |")
print()
print("| round | ranks | winner | its ex/s |")
print("|---|---|---|---|")
for i, (r, wall, rest) in enumerate(rows):
    label, eps = rest.split("|")
    print(f"| {i // 2 + 1} | {r} | {label} | {float(eps):.0f} |")
PY
