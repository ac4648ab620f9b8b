#!/usr/bin/env bash
# Proof by a real consumer: installs Holistic Trace Analysis (PyPI HolisticTraceAnalysis)
# into a virtual environment, profiles a few LeNet-5 steps with tunescope, exports the
# trace in the Kineto layout, runs HTA's temporal and kernel breakdowns on it and
# compares them with `tunescope report` (scripts/hta_compare.py).
#
# usage: scripts/check-hta.sh [BUILD_DIR]     (default: build)
# env:   HTA_VENV (default BUILD_DIR/hta-venv), PYTHON (default python3)
# exit:  0 agree, 1 disagree or tunescope failed, 77 skipped (no venv module, PyPI or
#        the package unreachable) with the reason printed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
tunescope="$build/tunescope"
venv="${HTA_VENV:-$build/hta-venv}"
python="${PYTHON:-python3}"

skip() { echo "check-hta: SKIP: $*"; exit 77; }
[ -x "$tunescope" ] || { echo "check-hta: $tunescope is not built" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" > "$work/venv.log" 2>&1 ||
    skip "cannot create a virtual environment with $python: $(tail -1 "$work/venv.log") (Debian: apt-get install python3-venv)"
fi
if ! "$venv/bin/python" -c "import hta" 2> /dev/null; then
  echo "check-hta: installing HolisticTraceAnalysis into $venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --timeout 30 HolisticTraceAnalysis \
    > "$work/pip.log" 2>&1 ||
    skip "cannot install HolisticTraceAnalysis from PyPI: $(grep -m1 -iE 'error|could not' "$work/pip.log" || tail -1 "$work/pip.log")"
fi

# Several hundred kernels of ~18 names on two lanes: enough for idle gaps and overlap.
"$tunescope" profile --model lenet5 --data fake --fake-count 512 --batch 64 --threads 2 \
  --warmup 1 --steps 4 --trace "$work/run.json.gz" > "$work/profile.log" 2>&1
mkdir "$work/hta"
"$tunescope" export "$work/run.json.gz" --format kineto -o "$work/hta/rank-0.json.gz"
"$tunescope" report "$work/run.json.gz" --top 0 > "$work/report.txt"
# First with HTA's nanoseconds kept (exact comparison), then as HTA runs by default.
status=0
HTA_DISABLE_NS_ROUNDING=1 "$venv/bin/python" "$here/hta_compare.py" "$work/hta" "$work/report.txt" \
  2> "$work/hta-exact.log" || status=1
"$venv/bin/python" "$here/hta_compare.py" "$work/hta" "$work/report.txt" 2> "$work/hta.log" || status=1
[ "$status" -eq 0 ] || { echo "check-hta: HTA's log:"; cat "$work/hta-exact.log" "$work/hta.log"; }
exit "$status"
