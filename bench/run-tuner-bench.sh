#!/usr/bin/env bash
# Compares the tuner's strategies, `auto` included, on spaces small enough to exhaust
# (layouts nchw,nhwc x the 4 CPU conv algorithms x streams 1,2: 16 candidates), for one
# or more models in one run. Per model, each strategy tunes TUNES times (the strategies
# take turns, so drift of the machine's load hits all alike): wall and CPU time and its
# pick, beside the estimate of that cost that `auto` printed in its tune of the same turn
# (its `strategy:` line). Then every distinct pick and the default config are re-measured together,
# interleaved (ROUNDS rounds of one `profile --config` run per pick; a pick's figure is
# its median over the rounds), so no tune's own figures decide how good a pick is.
# Prints Markdown tables: cost vs exhaustive, and each pick's distance from exhaustive's
# best pick. A benchmark, not a test: numbers depend on the machine and its load.
#
# usage: bench/run-tuner-bench.sh [BUILD_DIR] [DATA] [TUNES] [ROUNDS]
#   DATA: fake (default) | fashion-mnist;  TUNES: tunes per strategy (default 3);
#   ROUNDS: re-measurement rounds (default 7)
# env: MODELS: space-separated MODEL:BATCH[:STEPS[:WARMUP]] (default "lenet5:64");
#   STEPS (10) and WARMUP (3): per candidate where MODELS does not say;
#   MEASURE_STEPS (20) per re-measurement run; TRAIN_COUNT (4096) training examples;
#   KEEP=1 keeps the tune logs in a temp folder.
set -euo pipefail

build=${1:-build}
data=${2:-fake}
tunes=${3:-3}
rounds=${4:-7}
cli="$build/tunescope"
[[ -x "$cli" ]] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
work=$(mktemp -d)
if [[ -n ${KEEP:-} ]]; then echo "tune logs and configs kept in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi

train_count=${TRAIN_COUNT:-4096}
if [[ $data == fake ]]; then
  data_args=(--data fake --fake-count "$train_count" --test-limit 64)
else
  data_args=(--data "$data" --train-limit "$train_count" --test-limit 64)
fi
strategies=(exhaustive per-layer halving auto)
measure_steps=${MEASURE_STEPS:-20}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Relative spread of a pick over the rounds: (p90 - p10) / median, as the tuner's spread.
spread() { sort -g | awk -v m="$1" '{ v[NR] = $1 }
  function p(q,  x, i) { x = 1 + q * (NR - 1); i = int(x); return v[i] + (x - i) * (v[i < NR ? i + 1 : i] - v[i]) }
  END { print 100 * (p(0.9) - p(0.1)) / m }'; }
measure() {  # config.json -> ex/s of MEASURE_STEPS traced steps
  "$cli" profile --config "$1" "${data_args[@]}" --warmup 3 --steps "$measure_steps" 2>/dev/null \
    | sed -n 's/^[0-9]* traced steps: [0-9.]* s, \([0-9.]*\) ex\/s.*/\1/p'
}

bench_model() {  # MODEL BATCH STEPS WARMUP
  local model=$1 batch=$2 steps=$3 warmup=$4 dir="$work/$1"
  mkdir -p "$dir"
  local common=(--model "$model" --batch "$batch" --layouts nchw,nhwc --algorithms direct,gemm,fft-fftw,fft-own
                --threads-list 1 --streams-list 1,2 --steps "$steps" --warmup "$warmup" "${data_args[@]}")
  echo "$model: load before: $(cat /proc/loadavg)" >&2
  declare -A seconds cpu pick picks estimate ran  # per "strategy/run"; picks: pick label -> its config file
  for ((t = 1; t <= tunes; ++t)); do
    for strategy in "${strategies[@]}"; do
      echo "$model: tune $t of $tunes with $strategy..." >&2
      local out="$dir/$strategy.$t"
      TIMEFORMAT='%R %U %S'
      { time "$cli" tune "${common[@]}" --strategy "$strategy" -o "$out.json" > "$out.log" 2>&1 \
          || { cat "$out.log" >&2; exit 1; }; } 2> "$out.time"
      read -r wall user sys < "$out.time"
      seconds[$strategy/$t]=$wall
      cpu[$strategy/$t]=$(echo "$user + $sys" | bc)
      pick[$strategy/$t]=$(sed -n 's/^winner: \(.*\), [0-9.]* ex\/s.*/\1/p' "$out.log")
      picks[${pick[$strategy/$t]}]="$out.json"
      ran[$strategy/$t]=$(sed -n 's/^strategy: \([a-z-]*\) .*/\1/p' "$out.log" | head -1)
    done
    # The estimates auto made in its tune t, "strategy: per-layer (auto: ... estimated before
    # measuring: exhaustive 12 s (17 measurements), per-layer ...)", beside each strategy's cost.
    local line
    line=$(grep -m1 '^strategy: ' "$dir/auto.$t.log")
    for strategy in "${strategies[@]}"; do
      local named=$strategy
      [[ $strategy == auto ]] && named=${ran[auto/$t]}
      estimate[$strategy/$t]=$(echo "$line" | grep -o "[ :]$named [0-9.]* s (" | grep -o '[0-9.]*' | head -1 || true)
    done
  done

  local default_label="default: nchw conv=direct threads=1"
  printf '{"schema": "tunescope.config/1", "model": "%s", "batch": %d, "layout": "nchw", "conv": {"default": "direct"}, "threads": 1}\n' \
    "$model" "$batch" > "$dir/default.json"
  picks[$default_label]="$dir/default.json"
  local names=() label
  for label in "${!picks[@]}"; do names+=("$label"); done
  for ((r = 1; r <= rounds; ++r)); do
    echo "$model: re-measurement round $r of $rounds (${#names[@]} distinct picks)..." >&2
    for i in "${!names[@]}"; do measure "${picks[${names[$i]}]}" >> "$dir/pick.$i.eps"; done
  done
  declare -A eps noise
  for i in "${!names[@]}"; do
    eps[${names[$i]}]=$(median < "$dir/pick.$i.eps")
    noise[${names[$i]}]=$(spread "${eps[${names[$i]}]}" < "$dir/pick.$i.eps")
  done
  echo "$model: load after: $(cat /proc/loadavg)" >&2

  # Exhaustive's answer: its best pick over its tunes (re-measured), the yardstick.
  local best_exhaustive=0 best_label=""
  for ((t = 1; t <= tunes; ++t)); do
    local e=${eps[${pick[exhaustive/$t]}]}
    if (( $(echo "$e > $best_exhaustive" | bc -l) )); then best_exhaustive=$e; best_label=${pick[exhaustive/$t]}; fi
  done
  local exhaustive_wall
  exhaustive_wall=$(for ((t = 1; t <= tunes; ++t)); do echo "${seconds[exhaustive/$t]}"; done | median)

  echo
  echo "$model, batch $batch, --steps $steps --warmup $warmup:"
  echo
  echo "| strategy (ran) | tune | wall (s) | wall vs exhaustive | CPU (s) | auto's estimate (s) | pick | pick ex/s (median of $rounds) | pick spread | vs exhaustive's best pick |"
  echo "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|"
  for strategy in "${strategies[@]}"; do
    for ((t = 1; t <= tunes; ++t)); do
      local p=${pick[$strategy/$t]} name=$strategy
      [[ $strategy == auto ]] && name="auto (${ran[$strategy/$t]})"
      printf "| %s | %d | %.1f | %.2fx | %.1f | %s | %s | %.0f | %.0f%% | %+.1f%% |\n" "$name" "$t" "${seconds[$strategy/$t]}" \
        "$(echo "${seconds[$strategy/$t]} / $exhaustive_wall" | bc -l)" "${cpu[$strategy/$t]}" "${estimate[$strategy/$t]}" \
        "$p" "${eps[$p]}" "${noise[$p]}" "$(echo "100 * (${eps[$p]} / $best_exhaustive - 1)" | bc -l)"
    done
  done
  printf "\nexhaustive's best pick: %s (median wall of exhaustive: %.1f s)\n" "$best_label" "$exhaustive_wall"
  printf "%s: %.0f ex/s (spread %.0f%%); exhaustive's best pick is %+.1f%% over it\n" "$default_label" \
    "${eps[$default_label]}" "${noise[$default_label]}" "$(echo "100 * ($best_exhaustive / ${eps[$default_label]} - 1)" | bc -l)"
}

for entry in ${MODELS:-lenet5:64}; do
  IFS=: read -r model batch steps warmup <<< "$entry"
  bench_model "$model" "${batch:-64}" "${steps:-${STEPS:-10}}" "${warmup:-${WARMUP:-3}}"
done
