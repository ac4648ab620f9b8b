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
# CPU and GPU categories (legacy form: no cat, pid "CPU functions"/"CUDA functions"),
# and without GPU activities the CPU operators doing most of their own work.
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
activities = sum(map(is_activity, complete))
if activities == 0:
    # A CPU-only run: tunescope takes as activities the innermost ops doing most of
    # their own work. An op's parent is the nearest earlier op of its thread (by start,
    # longer first) it starts inside (an empty op at the end counts); an op is taken
    # when no ancestor is and its duration minus its children's is at least theirs.
    def is_op(e):
        return is_range(e) and not e["name"].startswith("ProfilerStep#") and \
            (e.get("cat") == "cpu_op" or "::" in e["name"])
    threads = {}
    for e in sorted(filter(is_op, complete), key=lambda e: (e["ts"], -e["dur"])):
        threads.setdefault((str(e.get("pid")), str(e.get("tid"))), []).append(e)
    for ops in threads.values():
        parent, called, covered = [None] * len(ops), [0.0] * len(ops), [False] * len(ops)
        for i, op in enumerate(ops):
            for j in range(i - 1, -1, -1):
                end = ops[j]["ts"] + ops[j]["dur"]
                if op["ts"] < end or (op["ts"] == end and op["dur"] == 0):
                    parent[i] = j
                    called[j] += op["dur"]
                    break
        for i, op in enumerate(ops):
            if parent[i] is not None and covered[parent[i]]:
                covered[i] = True
            elif op["dur"] - min(called[i], op["dur"]) >= called[i]:
                covered[i] = True
                activities += 1
print(sum(map(is_range, complete)), activities)
PY
)

"$tunescope" report "$work/torch.json" --top 0 > "$work/report.txt"
summary="$(grep -m1 -E '^trace: [0-9]+ activities' "$work/report.txt")"
echo "check-pytorch-trace: $(tail -1 "$work/torch.log")"
echo "check-pytorch-trace: file has $expected_activities activities (GPU, else working CPU ops), $expected_ranges CPU ranges; report: $summary"
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
