#!/usr/bin/env bash
# Compares the tuner's strategies on a space small enough to exhaust (lenet5 batch 64,
# layouts nchw,nhwc x the 4 CPU conv algorithms x streams 1,2: 16 candidates). Each
# strategy tunes TUNES times (the strategies take turns, so drift of the machine's load
# hits all alike): tune wall and CPU time, and its pick. Then every distinct pick is re-measured
# together, interleaved (ROUNDS rounds of one 20-step `profile --config` run per pick;
# a pick's figure is its median over the rounds), so no tune's own figures decide how
# good a pick is; the spread of exhaustive's picks over those rounds is the noise a pick
# is judged against. Prints Markdown tables. A benchmark, not a test: numbers depend on
# the machine and its load.
#
# usage: bench/run-tuner-bench.sh [BUILD_DIR] [DATA] [TUNES] [ROUNDS]
#   DATA: fake (default) | fashion-mnist;  TUNES: tunes per strategy (default 3);
#   ROUNDS: re-measurement rounds (default 7)
# env: MODEL (lenet5), BATCH (64), STEPS (10) and WARMUP (3) per candidate, MEASURE_STEPS (20)
#   per re-measurement run. The default config (nchw, direct, 1 thread, 1 stream) is
#   re-measured beside the picks, so the tables also say what tuning gained.
set -euo pipefail

build=${1:-build}
data=${2:-fake}
tunes=${3:-3}
rounds=${4:-7}
cli="$build/tunescope"
[[ -x "$cli" ]] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $data == fake ]]; then
  data_args=(--data fake --fake-count 4096 --test-limit 64)
else
  data_args=(--data "$data" --train-limit 4096 --test-limit 64)
fi
strategies=(exhaustive per-layer halving)
model=${MODEL:-lenet5}
batch=${BATCH:-64}
measure_steps=${MEASURE_STEPS:-20}
common=(--model "$model" --batch "$batch" --layouts nchw,nhwc --algorithms direct,gemm,fft-fftw,fft-own
        --threads-list 1 --streams-list 1,2 --steps "${STEPS:-10}" --warmup "${WARMUP:-3}" "${data_args[@]}")

echo "load before: $(cat /proc/loadavg)" >&2
declare -A seconds cpu pick picks  # per "strategy/run"; picks: distinct pick label -> its config file
for ((t = 1; t <= tunes; ++t)); do
  for strategy in "${strategies[@]}"; do
    echo "tune $t of $tunes with $strategy..." >&2
    out="$work/$strategy.$t"
    # Wall time, and CPU time (user + sys), which a loaded machine disturbs much less.
    TIMEFORMAT='%R %U %S'
    { time "$cli" tune "${common[@]}" --strategy "$strategy" -o "$out.json" > "$out.log" 2>&1 \
        || { cat "$out.log" >&2; exit 1; }; } 2> "$out.time"
    read -r wall user sys < "$out.time"
    seconds[$strategy/$t]=$wall
    cpu[$strategy/$t]=$(echo "$user + $sys" | bc)
    pick[$strategy/$t]=$(sed -n 's/^winner: \(.*\), [0-9.]* ex\/s.*/\1/p' "$out.log")
    picks[${pick[$strategy/$t]}]="$out.json"
  done
done

# The default config, re-measured beside the picks.
default_label="default: nchw conv=direct threads=1"
printf '{"schema": "tunescope.config/1", "model": "%s", "batch": %d, "layout": "nchw", "conv": {"default": "direct"}, "threads": 1}\n' \
  "$model" "$batch" > "$work/default.json"
picks[$default_label]="$work/default.json"

# The common re-measurement: each round runs every distinct pick once, in turn.
measure() {  # config.json -> ex/s of MEASURE_STEPS traced steps
  "$cli" profile --config "$1" "${data_args[@]}" --warmup 3 --steps "$measure_steps" 2>/dev/null \
    | sed -n 's/^[0-9]* traced steps: [0-9.]* s, \([0-9.]*\) ex\/s.*/\1/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Relative spread of a pick over the rounds: (p90 - p10) / median, as the tuner's spread.
spread() { sort -g | awk -v m="$1" '{ v[NR] = $1 }
  function p(q,  x, i) { x = 1 + q * (NR - 1); i = int(x); return v[i] + (x - i) * (v[i < NR ? i + 1 : i] - v[i]) }
  END { print 100 * (p(0.9) - p(0.1)) / m }'; }
names=()
for label in "${!picks[@]}"; do names+=("$label"); done
for ((r = 1; r <= rounds; ++r)); do
  echo "re-measurement round $r of $rounds (${#names[@]} distinct picks)..." >&2
  for i in "${!names[@]}"; do measure "${picks[${names[$i]}]}" >> "$work/pick.$i.eps"; done
done
declare -A eps noise
for i in "${!names[@]}"; do
  eps[${names[$i]}]=$(median < "$work/pick.$i.eps")
  noise[${names[$i]}]=$(spread "${eps[${names[$i]}]}" < "$work/pick.$i.eps")
done
echo "load after: $(cat /proc/loadavg)" >&2

# Exhaustive's answer: its best pick over its tunes (re-measured), the yardstick.
best_exhaustive=0
for ((t = 1; t <= tunes; ++t)); do
  e=${eps[${pick[exhaustive/$t]}]}
  if (( $(echo "$e > $best_exhaustive" | bc -l) )); then best_exhaustive=$e; best_label=${pick[exhaustive/$t]}; fi
done
median_of() {  # array-name strategy -> the median over its tunes
  local -n values=$1
  for ((t = 1; t <= tunes; ++t)); do echo "${values[$2/$t]}"; done | median
}
exhaustive_seconds=$(median_of seconds exhaustive)
exhaustive_cpu=$(median_of cpu exhaustive)

echo "| strategy | tune | wall (s) | CPU (s) | pick | pick ex/s (median of $rounds) | pick spread | vs exhaustive's best pick |"
echo "|---|--:|--:|--:|---|--:|--:|--:|"
for strategy in "${strategies[@]}"; do
  for ((t = 1; t <= tunes; ++t)); do
    p=${pick[$strategy/$t]}
    printf "| %s | %d | %.1f | %.1f | %s | %.0f | %.0f%% | %+.1f%% |\n" "$strategy" "$t" "${seconds[$strategy/$t]}" \
      "${cpu[$strategy/$t]}" "$p" "${eps[$p]}" "${noise[$p]}" "$(echo "100 * (${eps[$p]} / $best_exhaustive - 1)" | bc -l)"
  done
done
echo
echo "| strategy | median wall (s) | wall vs exhaustive | median CPU (s) | CPU vs exhaustive | worst pick vs exhaustive's best |"
echo "|---|--:|--:|--:|--:|--:|"
for strategy in "${strategies[@]}"; do
  s=$(median_of seconds "$strategy")
  c=$(median_of cpu "$strategy")
  worst=$(for ((t = 1; t <= tunes; ++t)); do echo "100 * (${eps[${pick[$strategy/$t]}]} / $best_exhaustive - 1)" | bc -l; done | sort -g | head -1)
  printf "| %s | %.1f | %.2fx | %.1f | %.2fx | %+.1f%% |\n" "$strategy" "$s" "$(echo "$s / $exhaustive_seconds" | bc -l)" \
    "$c" "$(echo "$c / $exhaustive_cpu" | bc -l)" "$worst"
done
printf "\nexhaustive's best pick: %s; its spread over the rounds: %.0f%%\n" "$best_label" "${noise[$best_label]}"
printf "%s: %.0f ex/s (spread %.0f%%); exhaustive's best pick is %+.1f%% over it\n" "$default_label" \
  "${eps[$default_label]}" "${noise[$default_label]}" "$(echo "100 * ($best_exhaustive / ${eps[$default_label]} - 1)" | bc -l)"
