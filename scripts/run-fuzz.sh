#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan, libraries instrumented for
# coverage) in their own folder and runs each for N seconds (default 60) on a copy of
# its seed corpus in fuzz/corpus/<target>/; new inputs stay in the build folder, not in
# the repo. Exits non-zero when a target crashes; the crash input is saved as
# <build>/crash-<target>-* to be turned into a regression test.
#   scripts/run-fuzz.sh [seconds] [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build_dir="${2:-build-fuzz}"
targets=(fuzz_idx_reader fuzz_run_config fuzz_chrome_trace)
# The ONNX reader's target exists where libonnx and protobuf are installed (scripts/install-deps.sh).
if [ -f /usr/include/onnx/onnx_pb.h ]; then targets+=(fuzz_onnx_model); fi

command -v clang++ >/dev/null || { echo "run-fuzz: clang++ not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
instrument="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$instrument" -DTUNESCOPE_FUZZ=ON -DTUNESCOPE_BUILD_TESTS=OFF \
  -DTUNESCOPE_BUILD_GUI=OFF -DTUNESCOPE_BUILD_BENCH=OFF -DTUNESCOPE_CUDA=OFF >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  mkdir -p "$corpus"
  cp -n fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
  echo "run-fuzz: $target for $seconds s"
  # -rss_limit_mb and -malloc_limit_mb: an input that makes a reader allocate absurd
  # memory (a lying header) is a finding, not a slow run. -timeout: one input may not hang.
  if ! "$build_dir/fuzz/$target" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="$build_dir/crash-$target-" \
      >"$build_dir/$target.log" 2>&1; then
    echo "run-fuzz: $target FAILED (see $build_dir/$target.log)" >&2
    tail -40 "$build_dir/$target.log" >&2
    status=1
  fi
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$build_dir/$target.log" || true
done
exit $status
