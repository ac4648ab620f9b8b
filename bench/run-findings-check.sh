#!/usr/bin/env bash
# The done-when cases of `tunescope analyze`'s findings (docs/ANALYZE.md), checked by
# hand: (1) a PyTorch profiler trace made by scripts/make-pytorch-trace.py (needs
# /usr/bin/python3 with torch), its findings and the per-call times of what they name;
# (2) our padding-heavy config, resnet18-small in NCHW with `onednn:direct` (oneDNN
# reorders every operand to its blocked layout, padding channels to 16), its findings,
# and the data-movement finding's predicted gain against the measured step of the same
# algorithm in NHWC (fewer reorders), in interleaved rounds. Not a test: figures depend on
# the machine and its load. Usage: bench/run-findings-check.sh [BUILD_DIR] [ROUNDS]
set -eu
bin="${1:-build}/tunescope"
rounds="${2:-3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-/usr/bin/python3}

echo "== PyTorch trace (scripts/make-pytorch-trace.py --steps 6)"
"$python" "$(dirname "$0")/../scripts/make-pytorch-trace.py" "$work/torch.json" --steps 6
"$bin" analyze "$work/torch.json" | sed -n '/^findings/,$p'
"$python" - "$work/torch.json" <<'PY'
import json, statistics, sys
events = json.load(open(sys.argv[1]))
events = events if isinstance(events, list) else events["traceEvents"]
ops = {}
for e in events:
    if e.get("ph") == "X" and e.get("name", "").startswith("aten::"):
        ops.setdefault(e["name"], []).append(e["dur"])
steps = [e["dur"] for e in events if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep")]
print(f"steps (us): median {statistics.median(steps):.0f}, {', '.join(f'{s:.0f}' for s in steps)}")
for name, durs in sorted(ops.items(), key=lambda kv: -sum(kv[1]))[:4]:
    print(f"{name}: total {sum(durs) / len(steps):.0f} us per step over {len(durs)} calls; calls (us): {', '.join(f'{d:.0f}' for d in durs[:12])}")
PY

profile() {  # out layout
  "$bin" profile --model resnet18-small --data fake --batch 16 --fake-count 256 --warmup 1 --steps 8 \
    --threads 2 --conv onednn:direct --layout "$2" --trace "$1" > /dev/null 2>&1
}
json_field() { "$bin" analyze "$1" --json | "$python" -c "import json,sys; d=json.load(sys.stdin); print($2)"; }

echo
echo "== padding-heavy: resnet18-small batch 16, nchw onednn:direct (peer: nhwc onednn:direct)"
echo "| round | nchw median step ms | data-movement gain ms (predicted nchw without reorders) | nhwc median step ms | measured nchw - nhwc ms |"
echo "|---:|---:|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
  profile "$work/nchw.json" nchw
  profile "$work/nhwc.json" nhwc
  nchw=$(json_field "$work/nchw.json" 'd["median_step_ms"]')
  gain=$(json_field "$work/nchw.json" 'next((f["gain_ms"] for f in d["findings"] if f["rule"] == "data-movement"), 0)')
  nhwc=$(json_field "$work/nhwc.json" 'd["median_step_ms"]')
  printf '| %s | %.1f | %.1f | %.1f | %.1f |\n' "$round" "$nchw" "$gain" "$nhwc" "$("$python" -c "print($nchw - $nhwc)")"
  echo "$nchw $gain $nhwc" >> "$work/rows"
done
"$python" - "$work/rows" <<'PY'
import statistics, sys
rows = [[float(v) for v in line.split()] for line in open(sys.argv[1])]
nchw, gain, nhwc = (statistics.median(r[i] for r in rows) for i in range(3))
print(f"| median | {nchw:.1f} | {gain:.1f} | {nhwc:.1f} | {nchw - nhwc:.1f} |")
PY
echo
"$bin" analyze "$work/nchw.json" | sed -n '/^findings/,$p' | cut -c1-300
