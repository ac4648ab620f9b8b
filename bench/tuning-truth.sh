#!/usr/bin/env bash
# How often does each strategy pick (within 3% of) the true best, and at what cost?
# For each problem and load (quiet, then a one-core busy loop this script starts and
# stops itself): N independent tunes per strategy, the strategies taking turns (tune 1
# of each, then tune 2 of each, ...: the machine's drift hits all alike), each with a
# fresh results DB so that nothing is reused; then the ground truth under the same load
# (bench_tuning_truth: every config of the space, every per-layer combination of the
# named layers, and every config a tune picked, in interleaved rounds to +-1%, at most
# 400 rounds or MAX_SECONDS s of steps per config).
# Prints, per problem, load and strategy: the share of picks within 3% of the true best
# (the best of all the configs the truth measured, by the mean step time over the
# truth's rounds: what a training run pays; beside it the share by the median step time,
# the criterion until session 15, and by the geometric mean, what the tune's rounds rank
# by; and the share by the mean with the best cross-fitted, chosen on half of the
# truth's rounds and valued on the other half, against the winner's curse of a flat
# top), the measurement cost (the tune's own
# count of the seconds spent measuring candidates, wall and CPU: core/tuner/TuneCost.h,
# the `done` event's measurement_seconds / measurement_cpu_seconds) relative to
# exhaustive's and, when run, to exhaustive-mixes', the mean tune wall time and whole-process CPU time relative to
# exhaustive's over uniform configs and, when run, to exhaustive-mixes' (the full space,
# every per-layer mix: nan when not run), and the picks. Beside the measured ratio to
# exhaustive over uniform configs, an ESTIMATE of the ratio to exhaustive over the space
# auto searches, which is too large to run on resnet18-small: that space's configs
# (algorithms ^ distinct conv problems x layouts x threads, from auto's start event) x
# exhaustive's mean measurement seconds per candidate (its measurement_seconds / trials,
# over its tunes at the same delta).
# Results: docs/BENCHMARKS.md, "Tuner accuracy".
#
#   bench/tuning-truth.sh [-n N] [-p PROBLEMS] [-l LOADS] [-s STRATEGIES] [-a ALGORITHMS]
#     -n N           tunes per strategy (default 3)
#     -p PROBLEMS    space-separated "model:batch:layers:max_seconds" (default
#                    "lenet5:128:conv1,conv2:20 resnet18-small:32::40", the issue's two
#                    nets): the truth crosses every per-layer
#                    combination of `layers` (empty: none; resnet18-small has too many)
#                    and times each config for at most max_seconds (default 20)
#     -l LOADS       "quiet loaded" (default), or one of them
#     -s STRATEGIES  default "exhaustive auto" (exhaustive is the cost's peer: keep it);
#                    "auto:5" runs that strategy 5 times instead of N (e.g. "exhaustive:2
#                    auto:5" on a net whose exhaustive tunes are long); "exhaustive-mixes"
#                    is exhaustive over the full space per-layer searches, every per-layer
#                    mix included (--per-layer-product): the second cost peer
#                    A strategy suffixed "~peer" ("auto~peer:2") runs with
#                    $PEER_BUILD/tunescope (an older build: before and after a change
#                    in one run, taking turns, against one truth); its cost ratios are
#                    to "exhaustive~peer" when that ran
#     -a ALGORITHMS  the conv algorithms of the space (default direct,gemm; "all": every
#                    one registered, the README main job's space). With many, leave the
#                    problem's layers empty: the truth then times the uniform configs
#                    and every pick, not every per-layer mix
#   The older form `bench/tuning-truth.sh N PROBLEMS` still works.
#   BUILD=build: where tunescope and bench/bench_tuning_truth are. PEER_BUILD: see -s.
#   KEEP=DIR: keeps each tune's jsonl events (every trial, its figures and reason) in
#   DIR/TAG-STRATEGY-I.events, to see afterwards why a tune missed, and the truth's
#   rounds (bench_tuning_truth --dump-rounds) in DIR/truth-rounds-TAG.tsv, to replay
#   other statistics on them (bench/rounds-statistics.py).
#   TRUTH_SETTLE=N: untimed settle steps at the start of each config's turn in the truth
#   (default 1; bench_tuning_truth --settle-steps). In the truth's long rotation an
#   unbound two-thread config's pool sleeps through many turns, and some of its turns
#   still start with both threads on one CPU: on lenet5 (24 configs) one settle step put
#   the unbound best mix at 0.953 of its bound twin by the mean, three at 0.978, and the
#   two train alike alone (docs/BENCHMARKS.md, session 22). lenet5's figures use 3.
#   TRUTH_BEFORE=1: also measures the truth once before the tunes (the space's configs,
#   without the picks, which are not known yet) and prints whether the machine's state held:
#   each truth's best valued in the other, and the picks scored against both. Under the busy
#   loop the bound and unbound twins traded places within 35 minutes (docs/BENCHMARKS.md,
#   session 23), and a truth taken in another state than the tunes' scores them wrongly.
set -euo pipefail

N=3
PROBLEMS="lenet5:128:conv1,conv2:20 resnet18-small:32::40"
LOADS="quiet loaded"
STRATEGIES="exhaustive auto"
while getopts "n:p:l:s:a:" opt; do
  case $opt in
    n) N=$OPTARG ;;
    p) PROBLEMS=$OPTARG ;;
    l) LOADS=$OPTARG ;;
    s) STRATEGIES=$OPTARG ;;
    a) ALGORITHMS=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-p PROBLEMS] [-l LOADS] [-s STRATEGIES] [-a ALGORITHMS]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
N=${1:-$N}
PROBLEMS=${2:-$PROBLEMS}
BUILD=${BUILD:-build}
LAYOUTS=nchw,nhwc
ALGORITHMS=${ALGORITHMS:-direct,gemm}
THREADS=1,2
if ! [[ "$N" =~ ^[0-9]+$ ]] || (( N < 1 || N > 50 )); then
  echo "tuning-truth.sh: -n must be 1..50, got '$N'" >&2
  exit 2
fi
for load in $LOADS; do
  [[ $load == quiet || $load == loaded ]] || { echo "tuning-truth.sh: -l takes quiet and/or loaded, got '$load'" >&2; exit 2; }
done
most=$N
for entry in $STRATEGIES; do
  [[ $entry =~ ^(exhaustive|exhaustive-mixes|halving|per-layer|pruned|auto)(~peer)?(:[0-9]+)?$ ]] || { echo "tuning-truth.sh: -s: unknown strategy or count '$entry'" >&2; exit 2; }
  [[ $entry == *:* ]] && (( ${entry#*:} > most )) && most=${entry#*:}
done
(( most <= 50 )) || { echo "tuning-truth.sh: -s: at most 50 tunes per strategy" >&2; exit 2; }
tools=("$BUILD/tunescope" "$BUILD/bench/bench_tuning_truth")
[[ $STRATEGIES == *~peer* ]] && tools+=("${PEER_BUILD:?tuning-truth.sh: a ~peer strategy needs PEER_BUILD}/tunescope")
for tool in "${tools[@]}"; do
  [[ -x "$tool" ]] || { echo "tuning-truth.sh: $tool not built" >&2; exit 2; }
done

if [[ $ALGORITHMS == all ]]; then  # every conv algorithm registered for the cpu backend
  ALGORITHMS=$("$BUILD/tunescope" list-algorithms |
    awk '/^backend /{cpu = ($2 == "cpu:")} cpu && $1 == "conv" {print $2}' | paste -sd,)
fi
work=$(mktemp -d /tmp/tuning-truth.XXXXXX)
busy=""
stop_busy() { if [[ -n "$busy" ]]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; busy=""; fi; }
trap 'stop_busy; rm -rf "$work"' EXIT
load_now() { uptime | sed 's/.*load average: //'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) hardware threads," \
     "$(grep -o -m1 -w 'avx512f' /proc/cpuinfo || grep -o -m1 -w 'avx2' /proc/cpuinfo)"
echo "space: layouts $LAYOUTS x algorithms $ALGORITHMS x threads $THREADS, fake data; tunes per strategy: $N ($STRATEGIES)"
for problem in $PROBLEMS; do
  IFS=: read -r model batch layers max_seconds <<< "$problem"
  max_seconds=${max_seconds:-20}
  for load in $LOADS; do
    if [[ $load == loaded ]]; then
      ( while :; do :; done ) &
      busy=$!
    fi
    tag="$model-$batch-$load"
    picks="$work/picks-$tag.tsv"
    : > "$picks"
    truth_args=(--model "$model" --batch "$batch" --layouts "$LAYOUTS" --algorithms "$ALGORITHMS"
      --threads "$THREADS" ${layers:+--layers "$layers"} --delta 0.02 --max-rounds 400
      --max-seconds "$max_seconds" --settle-steps "${TRUTH_SETTLE:-1}")
    if [[ -n ${TRUTH_BEFORE:-} ]]; then
      echo "== $model batch $batch, $load: truth before the tunes starts at load $(load_now) ($(date -u +%H:%M) UTC)"
      "$BUILD/bench/bench_tuning_truth" "${truth_args[@]}" > "$work/truth-before-$tag.tsv"
    fi
    echo "== $model batch $batch, $load: tunes start at load $(load_now) ($(date -u +%H:%M) UTC)"
    files=()
    for i in $(seq "$most"); do
      for entry in $STRATEGIES; do
        strategy=${entry%%:*}
        count=$N
        [[ $entry == *:* ]] && count=${entry#*:}
        (( i <= count )) || continue
        rm -f "$work/db.sqlite"*
        tunescope="$BUILD/tunescope"
        [[ $strategy == *~peer ]] && tunescope="$PEER_BUILD/tunescope"
        run_strategy=${strategy%~peer}
        extra=()
        if [[ $run_strategy == exhaustive-mixes ]]; then run_strategy=exhaustive; extra=(--per-layer-product); fi
        out="$work/pick-$tag-$strategy-$i.json"
        # %U+%S: the tune's CPU time (its threads and any isolated children).
        /usr/bin/time -f "%U %S" -o "$work/cpu" \
          "$tunescope" tune --model "$model" --data fake --batch "$batch" --layouts "$LAYOUTS" \
          --algorithms "$ALGORITHMS" --threads-list "$THREADS" --strategy "$run_strategy" "${extra[@]}" \
          --db "$work/db.sqlite" -o "$out" --progress jsonl 2>"$work/stderr" > "$work/events" \
          || { echo "tune failed ($strategy):"; tail -5 "$work/stderr"; continue; }
        ran=$(grep -m1 '"event":"start"' "$work/events" | sed -n 's/.*"strategy":"\([a-z-]*\)".*/\1/p')
        cpu=$(awk '{print $1 + $2}' "$work/cpu")
        # The space per-layer searches: one algorithm per distinct conv problem, per
        # (layout, threads); auto's start event names both counts.
        mixes=$(grep -m1 '"event":"start"' "$work/events" | sed -n 's/.*(\([0-9]*\) algorithms over \([0-9]*\) distinct conv problems.*/\1 \2/p')
        grep '"event":"done"' "$work/events" | sed "s/^/$strategy\t${ran:-?}\t$cpu\t${mixes:-}\t/" >> "$picks"
        files+=("$out")
        if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$work/events" "$KEEP/$tag-$strategy-$i.events"; fi
      done
    done
    echo "   tunes end at load $(load_now); truth starts ($(date -u +%H:%M) UTC)"
    "$BUILD/bench/bench_tuning_truth" "${truth_args[@]}" \
      --config-files "$(IFS=,; echo "${files[*]}")" --dump-rounds "$work/rounds-$tag.tsv" \
      > "$work/truth-$tag.tsv"
    echo "   truth ends at load $(load_now) ($(date -u +%H:%M) UTC)"
    if [[ -n ${KEEP:-} ]]; then cp "$work/rounds-$tag.tsv" "$KEEP/truth-rounds-$tag.tsv"; fi
    stop_busy
    before=()
    [[ -n ${TRUTH_BEFORE:-} ]] && before=("$work/truth-before-$tag.tsv")
    python3 - "$work/truth-$tag.tsv" "$picks" "$work/rounds-$tag.tsv" "${before[@]}" <<'PY'
import json, statistics, sys
def read_truth(path):
    truth = {}
    for line in open(path):
        label, eps, low, high, rounds, mean_eps, geo_eps = line.rstrip("\n").split("\t")
        # (mean ex/s, median ex/s, its 95% CI, rounds, geometric-mean ex/s)
        truth[label] = (float(mean_eps), float(eps), float(low), float(high), int(rounds), float(geo_eps))
    return truth
truth = read_truth(sys.argv[1])
best = max(v[0] for v in truth.values())
best_median = max(v[1] for v in truth.values())
best_geo = max(v[5] for v in truth.values())
print("truth (mean ex/s, share of the best by it; median ex/s [95% CI], share by it; geometric-mean ex/s; rounds):")
for label, (m, eps, low, high, rounds, geo) in sorted(truth.items(), key=lambda kv: -kv[1][0]):
    print(f"  {label:40s} {m:9.1f} {m / best:6.3f} | {eps:9.1f} [{low:.1f}, {high:.1f}] {eps / best_median:6.3f} | {geo:9.1f} | {rounds:4d}")
# The (layout, threads, other knobs) groups the space has, each config's label without its
# conv part: 2 layouts x (one thread, two threads unbound and bound) on the default lists.
groups = len({" ".join(w for w in label.split() if not w.startswith("conv=")) for label in truth})
picks = {}
for line in open(sys.argv[2]):
    strategy, ran, cpu, mixes, event = line.split("\t", 4)
    done = json.loads(event)
    # The configs of the space per-layer searches (algorithms ^ distinct problems x
    # groups), when the tune's start event named its counts.
    space = (int(mixes.split()[0]) ** int(mixes.split()[1]) * groups
             if mixes.strip() else float("nan"))
    # The measurement cost (core/tuner/TuneCost.h): the seconds spent measuring candidates
    # (auto's probe, the finds, the sweep, the rounds), wall and CPU; nan from older builds.
    picks.setdefault(strategy, []).append({
        "winner": done["winner"]["candidate"], "wall": done["seconds"], "cpu": float(cpu), "ran": ran,
        "measure": done.get("measurement_seconds", float("nan")),
        "measure_cpu": done.get("measurement_cpu_seconds", float("nan")),
        "per_candidate": done.get("measurement_seconds", float("nan")) / max(done["trials"], 1),
        "phases": {k: v["seconds"] for k, v in done.get("phases", {}).items()},
        "space": space, "decision": done.get("decision", ""),
        "foreign": done.get("foreign_load") or {}})
def mean(xs): return sum(xs) / len(xs)
def peer(name):
    runs = picks.get(name)
    if not runs: return {k: float("nan") for k in ("wall", "cpu", "measure", "measure_cpu")}
    return {k: mean([r[k] for r in runs]) for k in ("wall", "cpu", "measure", "measure_cpu")}
# A peer build's strategies are compared with the peer's exhaustive when it ran, else
# with this build's.
peers = {"": (peer("exhaustive"), peer("exhaustive-mixes"))}
peers["~peer"] = tuple(peer(n + "~peer") if picks.get(n + "~peer") else mine
                       for n, mine in zip(("exhaustive", "exhaustive-mixes"), peers[""]))
def ratio(a, b): return a / b if b == b and b > 0 else float("nan")
# Exhaustive's mean measurement seconds per candidate, which prices a space too large to run.
def per_candidate_of(name):
    return mean([r["per_candidate"] for r in picks[name]]) if picks.get(name) else float("nan")
for name in ("exhaustive", "exhaustive~peer"):
    if picks.get(name):
        print(f"{name}'s mean measurement per candidate: {per_candidate_of(name):.3f} s")
print("| strategy (ran) | picks within 3% of the true best (by the mean; the median; the geometric mean) | measurement cost vs exhaustive (wall / CPU) | measurement cost vs exhaustive-mixes (wall / CPU) | vs exhaustive over the space it searches, ESTIMATE (configs x exhaustive's s per candidate) | mean measurement s | mean tune s (min-max) | wall vs exhaustive | CPU vs exhaustive | wall vs exhaustive-mixes | CPU vs exhaustive-mixes | picks (share of the true best) |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
for strategy, runs in picks.items():
    # A pick the truth did not measure counts as a miss, named with "?".
    good = sum(r["winner"] in truth and truth[r["winner"]][0] >= 0.97 * best for r in runs)
    good_median = sum(r["winner"] in truth and truth[r["winner"]][1] >= 0.97 * best_median for r in runs)
    good_geo = sum(r["winner"] in truth and truth[r["winner"]][5] >= 0.97 * best_geo for r in runs)
    m = peer(strategy)
    suffix = "~peer" if strategy.endswith("~peer") else ""
    base, full = peers[suffix]
    per_candidate = per_candidate_of("exhaustive" + suffix if picks.get("exhaustive" + suffix)
                                     else "exhaustive")
    wall = [r["wall"] for r in runs]
    ran = ",".join(sorted(set(r["ran"] for r in runs)))
    names = ", ".join(f"{r['winner']} ({truth[r['winner']][0] / best:.3f})" if r["winner"] in truth
                      else f"{r['winner']} (?)" for r in runs)
    space = max(r["space"] for r in runs)
    priced = space * per_candidate
    estimate = (f"{ratio(m['measure'], priced):.4f}x of {space:.0f} x {per_candidate:.3f} s = {priced:.1f} s"
                if priced == priced else "n/a (no space count or no exhaustive tunes)")
    print(f"| {strategy} ({ran}) | {good}/{len(runs)}; {good_median}/{len(runs)}; {good_geo}/{len(runs)} | {ratio(m['measure'], base['measure']):.2f}x / "
          f"{ratio(m['measure_cpu'], base['measure_cpu']):.2f}x | {ratio(m['measure'], full['measure']):.2f}x / "
          f"{ratio(m['measure_cpu'], full['measure_cpu']):.2f}x | {estimate} | {m['measure']:.1f} | "
          f"{mean(wall):.1f} ({min(wall):.1f}-{max(wall):.1f}) | "
          f"{ratio(m['wall'], base['wall']):.2f}x | {ratio(m['cpu'], base['cpu']):.2f}x | "
          f"{ratio(m['wall'], full['wall']):.2f}x | {ratio(m['cpu'], full['cpu']):.2f}x | {names} |")
# The best by the mean is the largest of many noisy means, biased up where the top is
# flat (the winner's curse). Cross-fitted: the best chosen on the truth's odd rounds is
# valued on its even rounds and the reverse, each pick on the same half; a pick's share
# is the mean of the two. That value is unbiased for the config chosen, which may fall
# short of the true best, so the cross-fitted count is the lenient bound and the count
# above the strict one.
rounds_lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[3])]
labels, series = rounds_lines[0], {}
for k, label in enumerate(labels):
    series[label] = [float(row[k]) for row in rounds_lines[1:] if float(row[k]) > 0]
def half_mean(label, parity):
    xs = series[label][parity::2]
    return sum(xs) / len(xs)
def cross_share(label):
    shares = []
    for chosen_on in (0, 1):
        best_label = min(series, key=lambda l: half_mean(l, chosen_on))
        shares.append(half_mean(best_label, 1 - chosen_on) / half_mean(label, 1 - chosen_on))
    return sum(shares) / 2
print("cross-fitted (the best chosen on half of the truth's rounds, valued on the other half): "
      + "; ".join(f"{strategy} {sum(r['winner'] in series and cross_share(r['winner']) >= 0.97 for r in runs)}/{len(runs)} "
                  f"(" + ", ".join(f"{cross_share(r['winner']):.3f}" if r["winner"] in series else "?" for r in runs) + ")"
                  for strategy, runs in picks.items()))
# Tunes whose rounds stopped with a comparison open (the decision says "undecided": a cap,
# the budget or a stop ended them before the test or the zone decided every comparison).
print("undecided (rounds stopped with a comparison open): "
      + "; ".join(f"{strategy} {sum('undecided' in r['decision'] for r in runs)}/{len(runs)}"
                  for strategy, runs in picks.items()))
# What each tune's watch saw of other processes (SharedMachine.h: other cores; "*" when
# it charged the steps), and the decision of each pick outside 3 % by the mean.
for strategy, runs in picks.items():
    seen = ", ".join(f"{r['foreign'].get('other_cores', float('nan')):.2f}" + ("*" if r["foreign"].get("charged") else "")
                     for r in runs)
    print(f"{strategy}: other processes' cores at each tune's start (* charged): {seen}")
    for r in runs:
        if not (r["winner"] in truth and truth[r["winner"]][0] >= 0.97 * best):
            print(f"  miss {r['winner']}: {r['decision'][:600]}")
# Where each strategy's measurement went (TuneCost.h's phases of the done event): the
# median over its tunes of each phase's wall seconds, with the smallest and largest.
def median(xs):
    xs = sorted(xs)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2 if xs else float("nan")
print("| strategy | measurement s, median (min-max) | choice | finds | sweep | rounds |")
print("|---|---:|---:|---:|---:|---:|")
for strategy, runs in picks.items():
    def cell(values):
        return f"{median(values):.2f} ({min(values):.2f}-{max(values):.2f})" if values else "n/a"
    row = [cell([r["measure"] for r in runs])]
    for phase in ("choice", "finds", "sweep", "rounds"):
        row.append(cell([r["phases"][phase] for r in runs if phase in r["phases"]]))
    print(f"| {strategy} | " + " | ".join(row) + " |")
# TRUTH_BEFORE: did the machine's state hold from the truth before the tunes to the one after?
if len(sys.argv) > 4:
    before = {label: v[0] for label, v in read_truth(sys.argv[4]).items()}
    after = {label: v[0] for label, v in truth.items()}
    both = [label for label in before if label in after]
    def share(means, label): return means[label] / max(means[l] for l in both)
    best_before = max(both, key=lambda l: before[l])
    best_after = max(both, key=lambda l: after[l])
    held = share(after, best_before) >= 0.97 and share(before, best_after) >= 0.97
    print(f"state check over the {len(both)} configs both truths measured: the best before the tunes, "
          f"{best_before}, at {share(after, best_before):.3f} after; the best after, {best_after}, at "
          f"{share(before, best_after):.3f} before: "
          + ("the state held" if held else "THE STATE CHANGED: the picks were scored against a truth of another state"))
    moved = sorted(both, key=lambda l: -abs(share(after, l) - share(before, l)))[:3]
    print("  moved most (share of the best before -> after): "
          + "; ".join(f"{l} {share(before, l):.3f} -> {share(after, l):.3f}" for l in moved))
    print("  picks within 3 % of the best before the tunes (by the mean; the picks that truth "
          "measured): " + "; ".join(
              f"{strategy} {sum(share(before, r['winner']) >= 0.97 for r in runs if r['winner'] in before)}/"
              f"{sum(r['winner'] in before for r in runs)}" for strategy, runs in picks.items()))
PY
  done
done
