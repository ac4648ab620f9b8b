#!/usr/bin/env bash
# How often does each strategy pick (within 3% of) the true best, and at what cost?
# For each problem and load (quiet, then a one-core busy loop this script starts and
# stops itself): the ground truth of the space (bench_tuning_truth: every config in
# interleaved rounds to +-1%, at most 400 rounds or 20 s of steps per config), then N
# independent tunes per strategy (each with a fresh results DB, so nothing is reused).
# Prints, per problem, load and strategy: the share of picks within 3% of the true best,
# and the mean tune time relative to exhaustive's.
# Results: docs/BENCHMARKS.md, "Tuner accuracy".
#
#   bench/tuning-truth.sh [N] [PROBLEMS]
#     N: tunes per strategy (default 3)
#     PROBLEMS: "lenet5:128:conv1,conv2" (default: model, batch, its conv layers, whose
#       per-layer combinations are in the truth as per-layer may pick them), e.g. also
#       "resnet18-small:32:" (no per-layer combinations: 2^9 would be too many)
#   BUILD=build (where tunescope and bench/bench_tuning_truth are), STRATEGIES="exhaustive halving per-layer auto"
set -euo pipefail

N=${1:-3}
PROBLEMS=${2:-"lenet5:128:conv1,conv2"}
BUILD=${BUILD:-build}
STRATEGIES=${STRATEGIES:-"exhaustive halving per-layer auto"}
LAYOUTS=nchw,nhwc
ALGORITHMS=direct,gemm
THREADS=1,2
if ! [[ "$N" =~ ^[0-9]+$ ]] || (( N < 1 || N > 50 )); then
  echo "tuning-truth.sh: N must be 1..50, got '$N'" >&2
  exit 2
fi
for tool in "$BUILD/tunescope" "$BUILD/bench/bench_tuning_truth"; do
  [[ -x "$tool" ]] || { echo "tuning-truth.sh: $tool not built" >&2; exit 2; }
done

work=$(mktemp -d /tmp/tuning-truth.XXXXXX)
busy=""
stop_busy() { if [[ -n "$busy" ]]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; busy=""; fi; }
trap 'stop_busy; rm -rf "$work"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) hardware threads," \
     "$(grep -o -m1 -w 'avx512f' /proc/cpuinfo || grep -o -m1 -w 'avx2' /proc/cpuinfo)"
echo "space: layouts $LAYOUTS x algorithms $ALGORITHMS x threads $THREADS, fake data; $N tunes per strategy"
for problem in $PROBLEMS; do
  IFS=: read -r model batch layers <<< "$problem"
  for load in quiet loaded; do
    if [[ $load == loaded ]]; then
      ( while :; do :; done ) &
      busy=$!
    fi
    echo "== $model batch $batch, $load (uptime:$(uptime | sed 's/.*load average//'))"
    "$BUILD/bench/bench_tuning_truth" --model "$model" --batch "$batch" --layouts "$LAYOUTS" \
      --algorithms "$ALGORITHMS" --threads "$THREADS" ${layers:+--layers "$layers"} --delta 0.02 --max-rounds 400 --max-seconds 20 \
      > "$work/truth-$model-$load.tsv"
    for strategy in $STRATEGIES; do
      for i in $(seq "$N"); do
        rm -f "$work/db.sqlite"*
        "$BUILD/tunescope" tune --model "$model" --data fake --batch "$batch" --layouts "$LAYOUTS" \
          --algorithms "$ALGORITHMS" --threads-list "$THREADS" --strategy "$strategy" \
          --db "$work/db.sqlite" -o "$work/tuned.json" --progress jsonl 2>/dev/null \
          | grep '"event":"done"' | sed "s/^/$strategy\t/" >> "$work/picks-$model-$load.tsv"
      done
    done
    stop_busy
    python3 - "$work/truth-$model-$load.tsv" "$work/picks-$model-$load.tsv" <<'PY'
import json, sys
truth = {}
for line in open(sys.argv[1]):
    label, eps, low, high, rounds = line.rstrip("\n").split("\t")
    truth[label] = (float(eps), float(low), float(high), int(rounds))
best = max(v[0] for v in truth.values())
# Exhaustive and halving sweep global configs only (one algorithm for every layer):
# their picks are also judged against the best of those.
best_global = max(v[0] for k, v in truth.items() if "," not in k.split(" ")[1])
print("truth (median ex/s [95% CI], rounds):")
for label, (eps, low, high, rounds) in sorted(truth.items(), key=lambda kv: -kv[1][0]):
    print(f"  {label:32s} {eps:9.1f} [{low:.1f}, {high:.1f}] {rounds:4d}  {eps / best:6.3f}")
picks = {}
for line in open(sys.argv[2]):
    strategy, event = line.split("\t", 1)
    done = json.loads(event)
    picks.setdefault(strategy, []).append((done["winner"]["candidate"], done["seconds"]))
base = sum(s for _, s in picks.get("exhaustive", [("", 0)])) / max(1, len(picks.get("exhaustive", [])))
print("| strategy | picks within 3% of the true best | within 3% of the best global config | mean tune s | cost vs exhaustive | picks |")
print("|---|---:|---:|---:|---:|---|")
for strategy, runs in picks.items():
    # A pick outside the measured space counts as a miss, named with "?".
    good = sum(w in truth and truth[w][0] >= 0.97 * best for w, _ in runs)
    good_global = sum(w in truth and truth[w][0] >= 0.97 * best_global for w, _ in runs)
    mean = sum(s for _, s in runs) / len(runs)
    names = ", ".join(f"{w} ({truth[w][0] / best:.3f})" if w in truth else f"{w} (?)" for w, _ in runs)
    print(f"| {strategy} | {good}/{len(runs)} | {good_global}/{len(runs)} | {mean:.1f} | {mean / base:.2f}x | {names} |")
PY
  done
done
