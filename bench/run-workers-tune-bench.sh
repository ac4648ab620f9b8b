#!/usr/bin/env bash
# Workers as a tuning knob (issue 22 item 3): 2 workers x 1 thread (mpirun) against 1
# worker x 2 threads, with the tuner's own pick from workers {1,2} x threads {1,2}
# beside them, for lenet5 (batch 128, direct) and resnet18-small (batch 64, gemm), nchw.
# Each round runs, in an order that rotates: `profile` of 1 worker x 2 threads, `profile`
# of 2 workers x 1 thread under mpirun, and a `tune` of the 4 candidates followed at once
# by a `profile` of its pick (under mpirun when it picked 2 workers). Prints the ms/step
# (rank 0's) medians, min..max, ratios to 1 worker x 2 threads, and the tuner's picks.
#
# Usage: bench/run-workers-tune-bench.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
cli="$build/tunescope"
[ -x "$cli" ] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --bind-to none -np 2)  # as the tune's own launcher

declare -A data=(
  [lenet5]="--model lenet5 --data fake --fake-count 8192 --batch 128 --layout nchw --conv direct"
  [resnet18-small]="--model resnet18-small --data fake --fake-count 1024 --batch 64 --layout nchw --conv gemm"
)
declare -A timing=([lenet5]="--warmup 3 --steps 30" [resnet18-small]="--warmup 2 --steps 8")
declare -A tune=(
  [lenet5]="--model lenet5 --data fake --fake-count 8192 --batch 128 --layouts nchw --algorithms direct"
  [resnet18-small]="--model resnet18-small --data fake --fake-count 1024 --batch 64 --layouts nchw --algorithms gemm"
)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ms_of() { sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' "$1"; }
run() {  # run NAME CMD...: the command's ms/step into all.txt
  local name=$1
  shift
  "$@" > "$out/run.txt" 2>&1 || { cat "$out/run.txt" >&2; exit 1; }
  echo "$model $name $(ms_of "$out/run.txt")" | tee -a "$out/all.txt"
}
echo "load before: $(uptime)"
grep -m1 "model name" /proc/cpuinfo
for model in lenet5 resnet18-small; do
  variants=(threads workers tuned)
  for ((round = 0; round < rounds; ++round)); do
    for ((k = 0; k < ${#variants[@]}; ++k)); do
      v=${variants[$(((k + round) % ${#variants[@]}))]}
      case $v in
        threads) run threads "$cli" profile ${data[$model]} ${timing[$model]} --threads 2 ;;
        workers) run workers "${mpi[@]}" "$cli" profile ${data[$model]} ${timing[$model]} --threads 1 ;;
        tuned)
          start=$(date +%s.%N)
          "$cli" tune ${tune[$model]} --threads-list 1,2 --workers-list 1,2 --strategy exhaustive \
            --warmup 2 --steps 5 --max-timing-seconds 3 --trial-timeout 300 -o "$out/tuned.json" > "$out/tune.txt" 2>&1 \
            || { cat "$out/tune.txt" >&2; exit 1; }
          took=$(echo "$(date +%s.%N) - $start" | bc)
          pick=$(sed -n 's/^winner: \(.*\), [0-9.]* ex\/s.*/\1/p' "$out/tune.txt")
          echo "$model pick $took $pick" | tee -a "$out/picks.txt"
          workers=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('workers', 1))" "$out/tuned.json")
          prefix=()
          [ "$workers" -gt 1 ] && prefix=("${mpi[@]}")
          run tuned "${prefix[@]}" "$cli" profile --config "$out/tuned.json" \
            ${data[$model]%%--layout*} ${timing[$model]}
          ;;
      esac
    done
  done
done
echo "load after: $(uptime)"
cat "$out/picks.txt"
python3 "$(dirname "$0")/rounds-table.py" "$out/all.txt" "threads=1 worker x 2 threads" \
  "workers=2 workers x 1 thread" "tuned=the tuner's pick (profiled after each tune)"
