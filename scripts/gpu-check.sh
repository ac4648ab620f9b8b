#!/usr/bin/env bash
# GPU check of the CUDA backend: the one prepared script to run on a machine with an
# NVIDIA GPU (the borrowed H200), under one overall deadline. It
#  1. builds with CUDA (-DTUNESCOPE_CUDA=ON, GUI and benchmarks off),
#  2. runs the CUDA tests (ops against the CPU ops, lenet5 steps against cpu, cuDNN
#     algorithms, CUPTI) with a skip for want of a device counted as a failure,
#  3. trains lenet5 on fake data with `--backend cuda` (default conv: cudnn:implicit_gemm),
#  3b. profiles resnet18-small with the update on the host and on the device (2 streams,
#     async update, the same run otherwise), prints both throughputs and their ratio and
#     checks that the host run's trace has the host SGD and both copies,
#  4. with several GPUs, profiles lenet5 with one replica per device (NCCL) and checks
#     that the trace has kernels on the last device,
#  5. tunes resnet18-small at batch 512 on cuda with a short budget, writing the tuned
#     config, the results DB and the traces of the best and baseline configs.
#
# Usage: OUT=$OUT scripts/gpu-check.sh [BUILD_DIR]     (default BUILD_DIR: build-gpu)
#   OUT=DIR       where logs, tuned config, results DB and traces go (default: a temp dir)
#   DEADLINE=S    overall seconds (default 480, inside the device tool's 600 per call)
#   JOBS=N        build parallelism (default: nproc)
#   CUDA_ARCHS=…  CMAKE_CUDA_ARCHITECTURES (default "90-real;90-virtual": sm_90 + PTX)
# Exits non-zero when the build, a test, a run or an expectation fails, or a step runs
# past what is left of the deadline (the remaining steps are then reported as not run).
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build-gpu}"
jobs="${JOBS:-$(nproc)}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
deadline=$(( SECONDS + ${DEADLINE:-480} ))
status=0
step() { printf '\n== %s (%ds left)\n' "$*" $(( deadline - SECONDS )); }
failed() { printf 'gpu-check: FAILED: %s\n' "$*"; status=1; }
finish() {
  if [[ $status -eq 0 ]]; then echo "gpu-check: OK (results in $out)"; else echo "gpu-check: FAILED (logs in $out)"; fi
  exit "$status"
}
# Runs a command with the time left minus `reserve` seconds for the steps after it.
within() {
  local reserve=$1; shift
  local left=$(( deadline - SECONDS - reserve ))
  if (( left < 10 )); then echo "not run: deadline"; return 124; fi
  timeout --kill-after=5 "$left" "$@"
}

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv 2>&1 | tee "$out/nvidia-smi.log"

step "configure ($build_dir)"
if ! within 300 cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DTUNESCOPE_CUDA=ON -DTUNESCOPE_BUILD_GUI=OFF \
     -DTUNESCOPE_BUILD_BENCH=OFF "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-90-real;90-virtual}" \
     >"$out/configure.log" 2>&1; then
  tail -30 "$out/configure.log"; failed "configure"; finish
fi
grep "tunescope: CUDA backend" "$out/configure.log"

step "build (-j$jobs)"
if ! within 200 cmake --build "$build_dir" -j"$jobs" --target tunescope test_kernels_cuda test_kernels_backends >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -40; failed "build"; finish
fi
echo "built tunescope, test_kernels_cuda and test_kernels_backends"

step "CUDA tests (a skip for want of a device is a failure here)"
within 150 "$build_dir/tests/test_kernels_cuda" >"$out/test_kernels_cuda.log" 2>&1 || failed "test_kernels_cuda"
# The contract and match-direct tests of every backend; the cuda half is what runs here.
within 90 "$build_dir/tests/test_kernels_backends" --gtest_filter='*cuda*' >>"$out/test_kernels_cuda.log" 2>&1 ||
  failed "test_kernels_backends (cuda)"
grep -E "^\[  (PASSED|FAILED) |tests? from .* ran" "$out/test_kernels_cuda.log"
# Skips by design stay (an algorithm that does not support a problem, the no-device
# tests on a machine with a device); a skip for want of a device means the GPU was not used.
if grep -qE "no CUDA device|need a device" "$out/test_kernels_cuda.log"; then
  grep -E -m5 "no CUDA device|need a device" "$out/test_kernels_cuda.log"; failed "tests skipped for want of a device"
fi
echo "skipped by design: $(grep -c '^\[  SKIPPED \] .*ms)$' "$out/test_kernels_cuda.log")"

step "train --backend cuda: lenet5, fake data"
within 110 "$build_dir/tunescope" train --backend cuda --model lenet5 --data fake --fake-count 8192 \
  --test-limit 1024 --batch 128 --epochs 1 >"$out/train-cuda.log" 2>&1 || failed "train --backend cuda"
tail -6 "$out/train-cuda.log"
grep -q "cudnn:implicit_gemm" "$out/train-cuda.log" || failed "train --backend cuda did not use the backend's default conv"

# The update on the host beside the device's next forward pass (--update-on host), and the
# same run updating on the device: the ratio of their throughputs is the answer to
# docs/ARCHITECTURE.md's "can the update run on the host while the GPU runs the next batch".
for where in device host; do
  step "profile --backend cuda --update-on $where: resnet18-small, batch 256, 2 streams, async update"
  within 60 "$build_dir/tunescope" profile --backend cuda --model resnet18-small --data fake --fake-count 4096 \
    --test-limit 256 --batch 256 --streams 2 --async-update --update-on "$where" --warmup 3 --steps 10 \
    --trace "$out/update-$where.json" >"$out/profile-update-$where.log" 2>&1 || failed "profile --update-on $where"
  grep -E "traced steps" "$out/profile-update-$where.log"
done
eps() { grep -oE "[0-9.]+ ex/s" "$out/profile-update-$1.log" | head -1 | cut -d' ' -f1; }
if [[ -n "$(eps host)" && -n "$(eps device)" ]]; then
  awk -v h="$(eps host)" -v d="$(eps device)" 'BEGIN { printf "update on host / on device: %.3f (%s vs %s ex/s)\n", h / d, h, d }'
fi
for name in '"sgd"' '"memcpy.dtoh"' '"memcpy.htod"' '"host update"'; do
  grep -q "$name" "$out/update-host.json" 2>/dev/null || failed "the --update-on host trace has no $name"
done

# One replica per device (NCCL reduction) where the machine has several; the CUDA tests
# above already ran the NCCL reduction over one device and over all of them
# (DeviceCollectives.*) and two replicas against one (CudaTrainingStep.*Replicas*).
devices=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if (( devices > 1 )); then
  step "profile --backend cuda --replicas $devices: one replica per device, NCCL"
  within 90 "$build_dir/tunescope" profile --backend cuda --model lenet5 --data fake --fake-count 4096 \
    --test-limit 256 --batch $(( 128 * devices )) --replicas "$devices" --warmup 2 --steps 5 \
    --trace "$out/replicas.json" >"$out/profile-replicas.log" 2>&1 || failed "profile --replicas $devices"
  tail -4 "$out/profile-replicas.log"
  # Each device's kernels are on its own pid: the last replica's device must appear.
  grep -q "\"device\":$(( devices - 1 ))" "$out/replicas.json" 2>/dev/null \
    || failed "the replicas trace shows no kernel on device $(( devices - 1 ))"
else
  echo "one device: replicas across devices not run (the CUDA tests ran NCCL over the one device)"
fi

step "tune --backend cuda: resnet18-small, batch 512, short budget"
within 5 "$build_dir/tunescope" tune --backend cuda --model resnet18-small --batch 512 --data fake \
  --fake-count 4096 --test-limit 512 --layouts nchw,nhwc \
  --algorithms cudnn:implicit_gemm,cudnn:implicit_precomp_gemm,cudnn:winograd_nonfused \
  --streams-list 1,2 --strategy exhaustive --steps 5 --warmup 2 --budget 60 \
  --db "$out/results.db" --trace-dir "$out/traces" -o "$out/tuned.json" >"$out/tune-cuda.log" 2>&1 \
  || failed "tune --backend cuda"
tail -25 "$out/tune-cuda.log"
[[ -s "$out/tuned.json" && -s "$out/traces/best.json" ]] || failed "tune wrote no config or no trace"

finish
