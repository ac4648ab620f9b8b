#!/usr/bin/env bash
# Workers against threads on one machine (issue 22 item 3): N ranks x 1 thread
# (mpirun, gradients all-reduced over MPI) against 1 process x N threads, same global
# batch, for lenet5 and resnet18-small; the ranks also with --allreduce-overlap=off.
# Interleaved rounds (the order rotates each round), the ms/step of `tunescope profile`
# (rank 0's, which includes waiting for the all-reduce); prints medians, min..max and
# the ratios to the 1-process run, with the load before and after.
#
# Usage: bench/run-ranks-bench.sh [BUILD_DIR] [ROUNDS] [RANKS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
ranks=${3:-2}
cli="$build/tunescope"
[ -x "$cli" ] || { echo "no $cli: build the tunescope target first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Unbound ranks, as the single process is: the machine is shared, so pinning a rank to a
# core another program is busy on would measure that program.
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")

declare -A args=(
  [lenet5]="--model lenet5 --data fake --fake-count 8192 --batch 128 --warmup 3 --steps 30"
  [resnet18-small]="--model resnet18-small --data fake --fake-count 2048 --batch 64 --warmup 2 --steps 8"
)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load before: $(uptime)"
grep -m1 "model name" /proc/cpuinfo
for model in lenet5 resnet18-small; do
  variants=(threads ranks ranks-no-overlap)
  for ((round = 0; round < rounds; ++round)); do
    for ((k = 0; k < ${#variants[@]}; ++k)); do
      v=${variants[$(((k + round) % ${#variants[@]}))]}
      case $v in
        threads) cmd=("$cli" profile ${args[$model]} --threads "$ranks") ;;
        ranks) cmd=("${mpi[@]}" "$cli" profile ${args[$model]} --threads 1) ;;
        ranks-no-overlap) cmd=("${mpi[@]}" "$cli" profile ${args[$model]} --threads 1 --allreduce-overlap=off) ;;
      esac
      "${cmd[@]}" > "$out/run.txt" 2>&1 || { cat "$out/run.txt" >&2; exit 1; }
      ms=$(sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' "$out/run.txt")
      echo "$model $v $ms" | tee -a "$out/all.txt"
    done
  done
done
echo "load after: $(uptime)"
python3 "$(dirname "$0")/rounds-table.py" "$out/all.txt" "threads=1 worker x $ranks threads" \
  "ranks=$ranks workers x 1 thread" "ranks-no-overlap=$ranks workers x 1 thread, overlap off"
