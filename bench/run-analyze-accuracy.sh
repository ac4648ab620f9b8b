#!/usr/bin/env bash
# Accuracy of `tunescope analyze --what-if-times`: for each case, the trace of a BASE
# config gets the kernel times of each layer and pass from a SOURCE trace (another
# config), the replay predicts the median step of the TARGET config, which is then
# profiled twice, before and after the others; the error is predicted / measured - 1
# with measured the mean of the two, and the noise floor is how far the two measurements
# of the target are apart (first / second - 1). Rounds are interleaved (each round
# profiles every config in turn). Prints one markdown row per case and round, the median
# and worst |error| and |noise| per round, then per case the median prediction over the
# rounds against the median of all the target's runs (interleaved rounds, medians: how
# every figure in docs/BENCHMARKS.md is compared). Not a test: the numbers depend on the machine and its
# load. Four replay models predict from the same traces: recorded latencies and
# durations (analyze's default), the same without the inferred waits for a core another
# lane held (--core-waits none: the model before them), typical latencies (--latency
# typical), and typical latencies and durations (--latency typical --durations typical:
# one median step).
# Each profile keeps where the host had the two CPUs (the core-distance watch, in its
# trace's metadata). A round whose four traces were not all taken in one state (the CPUs
# near in one, far apart in another: `analyze`'s core_states_differ) measures the host's
# move, not the replay: it is profiled again, up to RETAKES more times (default 2). The
# rows say which rounds kept two states, and the summaries come both over every round and
# over the rounds in one state.
# Usage: [CPU_BINDING=off|cores] [PIN_CPUS=LIST] [PEER_BIN=TUNESCOPE] [RETAKES=N] bench/run-analyze-accuracy.sh [BUILD_DIR] [ROUNDS]
# CPU_BINDING (off or cores; default off) is every profile's --cpu-binding, base, source
# and target alike: with cores each lane thread has a CPU of its own, so no run's lanes
# take turns on one core while the other idles; on a loaded machine a bound lane cannot
# leave a busy CPU either (docs/BENCHMARKS.md, "What-if replay: lanes bound to CPUs").
# PIN_CPUS (e.g. 0) runs every profile under `taskset -c LIST`: with one CPU the lanes
# share a core in every run, whatever else the machine runs (then CPU_BINDING=off).
# PEER_BIN (another tunescope binary, e.g. the previous commit's) predicts the default
# model from the same traces too, as a last model column: two replay models compared on
# the same runs, without the noise of separate target runs.
set -eu
bin="${1:-build}/tunescope"
rounds="${2:-3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

profile() {  # out model batch steps knobs...
  out=$1 model=$2 batch=$3 steps=$4
  shift 4
  ${PIN_CPUS:+taskset -c "$PIN_CPUS"} "$bin" profile --model "$model" --data fake --batch "$batch" --fake-count $((batch * 16)) \
    --warmup 2 --steps "$steps" --threads 2 --threads-per-lane 1 --cpu-binding "${CPU_BINDING:-off}" \
    --trace "$out" "$@" > /dev/null 2>&1
}

# name | model batch steps | base knobs | source knobs (times from) | target knobs
#   [| layers: --what-if-layers, space-separated globs]
cases=(
  "lenet5 s2+async: direct -> gemm|lenet5 64 12|--streams 2 --async-update --conv direct|--conv gemm|--streams 2 --async-update --conv gemm"
  "lenet5 s2+async: gemm -> direct|lenet5 64 12|--streams 2 --async-update --conv gemm|--conv direct|--streams 2 --async-update --conv direct"
  "lenet5 s1: direct -> gemm|lenet5 64 12|--conv direct|--streams 2 --async-update --conv gemm|--conv gemm"
  "resnet18-small s2+async: direct -> gemm|resnet18-small 16 4|--streams 2 --async-update --conv direct|--conv gemm|--streams 2 --async-update --conv gemm"
  "resnet18-small s2+async: gemm -> direct|resnet18-small 16 4|--streams 2 --async-update --conv gemm|--conv direct|--streams 2 --async-update --conv direct"
  "resnet18-small s1: direct -> gemm|resnet18-small 16 4|--conv direct|--streams 2 --async-update --conv gemm|--conv gemm"
  # Per-layer mixes of two runs with the same lanes (--what-if-layers): the tuner's question.
  "lenet5 s2+async: direct, conv2 from gemm|lenet5 64 12|--streams 2 --async-update --conv direct|--streams 2 --async-update --conv gemm|--streams 2 --async-update --conv direct,conv2=gemm|conv2"
  "resnet18-small s2+async: gemm, stem from direct|resnet18-small 16 4|--streams 2 --async-update --conv gemm|--streams 2 --async-update --conv direct|--streams 2 --async-update --conv gemm,conv1=direct|conv1"
)

# Whether trace $1 and trace $2 were taken with the host's CPUs in different states: 1, 0,
# or 0 when either has no watch (a one-thread run).
states_differ() {
  "$bin" analyze "$1" --what-if-times "$2" --json |
    python3 -c 'import json,sys; print(1 if json.load(sys.stdin)["what_if"]["core_states_differ"] else 0)'
}

# "61-89 ns": the lowest and highest core-distance probe of the traces given ("-" if none).
probe_range() {
  python3 - "$@" <<'PY'
import json, sys
probes = []
for path in sys.argv[1:]:
    text = json.load(open(path)).get("otherData", {}).get("extra", {}).get("core_distance_ns")
    if text:
        probes += [float(x) for x in text.split()[2:]]
print(f"{min(probes):.0f}-{max(probes):.0f} ns" if probes else "-")
PY
}

median_ms() { "$bin" analyze "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_step_ms"])'; }

errors="$work/errors"
echo "cpu_binding ${CPU_BINDING:-off}${PIN_CPUS:+, taskset -c $PIN_CPUS}; start $(date -u +%H:%M:%S) UTC, load $(uptime | sed 's/.*load average: //')"
echo "| case | round | core states | base ms | measured ms (two runs) | noise | predicted, recorded | error | predicted, no core waits | error | predicted, typical latencies | error | predicted, typical latencies and durations | error |${PEER_BIN:+ predicted by PEER_BIN, recorded | error |}"
echo "|------|------:|---|--------:|-----------------------:|------:|------:|------:|------:|------:|------:|------:|------:|------:|${PEER_BIN:+------:|------:|}"
for round in $(seq 1 "$rounds"); do
  for c in "${cases[@]}"; do
    IFS='|' read -r name sizes base source target layers <<< "$c"
    layer_flags=()
    for l in $layers; do layer_flags+=(--what-if-layers "$l"); done
    # shellcheck disable=SC2086
    set -- $sizes
    retakes=0
    retaken=""
    while :; do
      # shellcheck disable=SC2086
      profile "$work/target-a.json" "$@" $target
      # shellcheck disable=SC2086
      profile "$work/base.json" "$@" $base
      # shellcheck disable=SC2086
      profile "$work/source.json" "$@" $source
      # shellcheck disable=SC2086
      profile "$work/target-b.json" "$@" $target
      states=one
      for other in source target-a target-b; do
        if [ "$(states_differ "$work/base.json" "$work/$other.json")" = 1 ]; then states=two; fi
      done
      probes=$(probe_range "$work/base.json" "$work/source.json" "$work/target-a.json" "$work/target-b.json")
      if [ "$states" = one ] || [ "$retakes" -ge "${RETAKES:-2}" ]; then break; fi
      retakes=$((retakes + 1))
      retaken="$retaken${retaken:+, }$probes"
    done
    state_cell="$states, $probes"
    if [ "$retakes" -gt 0 ]; then state_cell="$state_cell ($retakes retaken: $retaken)"; fi
    predict() {
      "${predictor:-$bin}" analyze "$work/base.json" --what-if-times "$work/source.json" ${layer_flags[@]+"${layer_flags[@]}"} \
        --latency "$1" --durations "$2" --core-waits "${3:-inferred}" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["what_if"]["predicted_median_step_ms"])'
    }
    rec=$(predict recorded recorded)
    nocore=$(predict recorded recorded none)
    typ=$(predict typical recorded)
    med=$(predict typical typical)
    peer=""
    if [ -n "${PEER_BIN:-}" ]; then peer=$(predictor="$PEER_BIN" predict recorded recorded); fi
    base_ms=$(median_ms "$work/base.json")
    a=$(median_ms "$work/target-a.json")
    b=$(median_ms "$work/target-b.json")
    read -r measured noise error_rec error_nocore error_typ error_med < <(python3 -c "m = ($a + $b) / 2
print(f'{m:.2f} {$a / $b - 1:+.1%} {$rec / m - 1:+.1%} {$nocore / m - 1:+.1%} {$typ / m - 1:+.1%} {$med / m - 1:+.1%}')")
    echo "$name|$states|$a|$b|$rec|$nocore|$typ|$med${peer:+|$peer}" >> "$errors"
    printf '| %s | %s | %s | %.2f | %s (%.2f, %.2f) | %s | %.2f | %s | %.2f | %s | %.2f | %s | %.2f | %s |' "$name" "$round" "$state_cell" "$base_ms" \
      "$measured" "$a" "$b" "$noise" "$rec" "$error_rec" "$nocore" "$error_nocore" "$typ" "$error_typ" "$med" "$error_med"
    if [ -n "$peer" ]; then
      python3 -c "print(f' {$peer:.2f} | {$peer / (($a + $b) / 2) - 1:+.1%} |', end='')"
    fi
    echo
  done
done
echo "end $(date -u +%H:%M:%S) UTC, load $(uptime | sed 's/.*load average: //')"
python3 - "$errors" <<'PY'
import statistics, sys
# name | core states (one, two) | target a | target b | predictions, one per model
rows = [line.rstrip("\n").split("|") for line in open(sys.argv[1])]
models = ["recorded", "recorded, no core waits", "typical latencies", "typical latencies and durations"]
if len(rows[0]) > 8:
    models.append("recorded, by PEER_BIN")
def summary(what, values):
    v = [abs(x) for x in values]
    if v:
        print(f"\n|{what}|: median {100 * statistics.median(v):.1f} %, worst {100 * max(v):.1f} % over {len(v)}")
def report(rows, title):
    print(f"\n#### {title}: {len(rows)} rounds")
    if not rows:
        return
    # Per round: one prediction against the mean of that round's two target runs.
    summary("noise between the two target runs of a round", [float(r[2]) / float(r[3]) - 1 for r in rows])
    for i, model in enumerate(models):
        summary(f"error per round, {model}", [float(r[4 + i]) / ((float(r[2]) + float(r[3])) / 2) - 1 for r in rows])
    # Per case, over the interleaved rounds: the median prediction against the median of all
    # the target's runs (two a round), the comparison the benchmark rules ask for.
    print("\n| case | rounds | target runs: median ms (min-max) | " + " | ".join(f"median prediction, {m} | error" for m in models) + " |")
    print("|---|---:|---:|" + "---:|---:|" * len(models))
    errors = [[] for _ in models]
    for case in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == case]
        runs = [float(r[k]) for r in mine for k in (2, 3)]
        measured = statistics.median(runs)
        cells = []
        for i in range(len(models)):
            predicted = statistics.median(float(r[4 + i]) for r in mine)
            errors[i].append(predicted / measured - 1)
            cells.append(f"{predicted:.2f} | {predicted / measured - 1:+.1%}")
        print(f"| {case} | {len(mine)} | {measured:.2f} ({min(runs):.2f}-{max(runs):.2f}) | " + " | ".join(cells) + " |")
    for i, model in enumerate(models):
        summary(f"error per case (median of the rounds), {model}", errors[i])
report(rows, "Every round")
report([r for r in rows if r[1] == "one"], "The rounds whose four traces saw the CPUs in one state")
PY
