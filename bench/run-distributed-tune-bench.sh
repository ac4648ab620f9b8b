#!/usr/bin/env bash
# Distributed tuning (issue 22 item 4): the wall time of `mpirun -np 2 tunescope tune`
# (the candidates spread over 2 ranks, each pinned to a core of its own) against a
# 1-rank tune of the same space (`mpirun -np 1`, pinned to one core), and the winner
# each picks. The space holds only 1-thread candidates, so that a rank's candidate runs
# on its core alone: on a 2-core machine two ranks measuring at once would otherwise
# share the cores. Interleaved rounds (the order alternates), a fresh DB per tune; prints
# each tune's wall time, winner and its ex/s, then the medians and their ratio.
# With PEER_BUILD_DIR (another build, say of an earlier commit), each round also runs its
# 2-rank tune, in the same rotation: the peer measured beside the change.
#
# Usage: bench/run-distributed-tune-bench.sh [BUILD_DIR] [ROUNDS]
#        [lenet5|lenet5-all|resnet18-small] [PEER_BUILD_DIR]
# (lenet5: 10 candidates of a few ms a step, a tune of seconds, where starting the ranks
# weighs; lenet5-all: batch 256, every algorithm, 20 candidates; resnet18-small: 6
# candidates of about 0.1 s a step)
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
model=${3:-lenet5}
peer=${4:-}
cli="$build/tunescope"
[ -x "$cli" ] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
[ -z "$peer" ] || [ -x "$peer/tunescope" ] || { echo "no $peer/tunescope: build it first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
case $model in
  lenet5) space="--model lenet5 --data fake --fake-count 4096 --batch 64 --layouts nchw,nhwc
  --algorithms direct,direct-small,gemm,winograd,fft-own --threads-list 1 --strategy exhaustive
  --steps 5 --max-timing-seconds 3" ;;
  # The space a user would tune lenet5 in: its training batch, every algorithm registered
  # (no --algorithms), both layouts: 20 candidates.
  lenet5-all) space="--model lenet5 --data fake --fake-count 4096 --batch 256 --layouts nchw,nhwc
  --threads-list 1 --strategy exhaustive --steps 5 --max-timing-seconds 3" ;;
  resnet18-small) space="--model resnet18-small --data fake --fake-count 512 --batch 16 --layouts nchw,nhwc
  --algorithms direct,gemm,winograd --threads-list 1 --strategy exhaustive
  --steps 5 --max-timing-seconds 3" ;;
  *) echo "model: lenet5, lenet5-all or resnet18-small, got '$model'" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load before: $(uptime)"
grep -m1 "model name" /proc/cpuinfo
for ((round = 0; round < rounds; ++round)); do
  # Contenders: "ranks" (1, 2, or 2p: the peer build's 2 ranks), rotated by round.
  order=(2 1)
  [ -n "$peer" ] && order=(2 1 2p)
  for ((turn = 0; turn < round % ${#order[@]}; ++turn)); do order=("${order[@]:1}" "${order[0]}"); done
  for who in "${order[@]}"; do
    rm -f "$out/tune.db"
    ranks=${who%p}
    binary=$cli
    [ "$who" = 2p ] && binary="$peer/tunescope"
    start=$(date +%s.%N)
    mpirun --bind-to core -np "$ranks" "$binary" tune $space --db "$out/tune.db" \
      -o "$out/tuned.json" > "$out/tune.txt" 2>&1 || { cat "$out/tune.txt" >&2; exit 1; }
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    winner=$(sed -n 's/^winner: \(.*\), \([0-9.]*\) ex\/s.*/\1|\2/p' "$out/tune.txt")
    echo "$who $wall $winner" | tee -a "$out/all.txt"
  done
done
echo "load after: $(uptime)"
python3 - "$out/all.txt" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split(" ", 2) for line in open(sys.argv[1])]
names = {"1": "1 rank", "2": "2 ranks", "2p": "2 ranks, peer build"}
walls = {r: [float(x[1]) for x in rows if x[0] == r] for r in names}
m1 = statistics.median(walls["1"])
print("| tune | median wall s | min..max | ratio to 1 rank |")
print("|---|---|---|---|")
for r, name in names.items():
    w = walls[r]
    if w:
        m = statistics.median(w)
        print(f"| {name} | {m:.1f} | {min(w):.1f}..{max(w):.1f} | {m / m1:.2f} |")
print()
print("| # | tune | wall s | winner | its ex/s |")
print("|---|---|---|---|---|")
for i, (r, wall, rest) in enumerate(rows):
    label, eps = rest.split("|")
    print(f"| {i + 1} | {names[r]} | {float(wall):.1f} | {label} | {float(eps):.0f} |")
PY
