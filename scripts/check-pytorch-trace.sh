#!/usr/bin/env bash
# Traces in, from the real producer: writes a PyTorch profiler trace of a few LeNet-5
# steps with the installed torch (Debian python3-torch; PyTorch 2.x with CUDA where
# present), then checks that `tunescope report` reads every event of it and that
# `tunescope export` to nsys-sqlite and kineto keeps the same figures.
#
# usage: scripts/check-pytorch-trace.sh [BUILD_DIR]    (default: build)
# env:   PYTHON: the interpreter with torch (default: /usr/bin/python3, Debian's)
# exit:  0 ok, 1 failure, 77 skipped (torch not importable) with the reason printed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
tunescope="$build/tunescope"
python="${PYTHON:-/usr/bin/python3}"
[ -x "$tunescope" ] || { echo "check-pytorch-trace: $tunescope is not built" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

status=0
"$python" "$here/make-pytorch-trace.py" "$work/torch.json" --steps 2 > "$work/torch.log" 2>&1 || status=$?
if [ "$status" -eq 77 ]; then
  echo "check-pytorch-trace: SKIP: $(tail -1 "$work/torch.log") (Debian: apt-get install python3-torch)"
  exit 77
elif [ "$status" -ne 0 ]; then
  cat "$work/torch.log" >&2
  exit 1
fi

# What the file holds, counted independently of tunescope: complete events of PyTorch's
# CPU and GPU categories (legacy form: no cat, pid "CPU functions"/"CUDA functions").
read -r expected_ranges expected_activities < <("$python" - "$work/torch.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
events = data["traceEvents"] if isinstance(data, dict) else data
complete = [e for e in events if e.get("ph") == "X"]
def is_range(e):
    return e.get("cat") in ("cpu_op", "user_annotation", "gpu_user_annotation") or \
        ("cat" not in e and e.get("pid") == "CPU functions")
def is_activity(e):
    return e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync") or \
        ("cat" not in e and e.get("pid") == "CUDA functions")
print(sum(map(is_range, complete)), sum(map(is_activity, complete)))
PY
)

"$tunescope" report "$work/torch.json" --top 0 > "$work/report.txt"
summary="$(grep -m1 -E '^trace: [0-9]+ activities' "$work/report.txt")"
echo "check-pytorch-trace: $(tail -1 "$work/torch.log")"
echo "check-pytorch-trace: file has $expected_activities GPU activities, $expected_ranges CPU ranges; report: $summary"
case "$summary" in
  "trace: $expected_activities activities, $expected_ranges ranges"*) ;;
  *) echo "check-pytorch-trace: FAILED: counts differ"; exit 1 ;;
esac

body() { sed -n '/^trace: [0-9]* activities/,$p' "$1"; }
for format in nsys-sqlite kineto; do
  "$tunescope" export "$work/torch.json" --format "$format" -o "$work/torch.$format" > /dev/null
  "$tunescope" report "$work/torch.$format" --top 0 > "$work/report.$format.txt"
  if ! diff <(body "$work/report.txt") <(body "$work/report.$format.txt") > "$work/diff.txt"; then
    echo "check-pytorch-trace: FAILED: report after export to $format differs:"
    cat "$work/diff.txt"
    exit 1
  fi
done
echo "check-pytorch-trace: ok (report identical after export to nsys-sqlite and kineto)"
