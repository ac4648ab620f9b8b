#!/usr/bin/env bash
# Renders tunescope-gui on a real profile trace under Xvfb and saves the window to
# docs/gui-timeline.png (the README's screenshot). Builds what it needs if missing.
# Usage: scripts/gui-screenshot.sh [output.png]
# Env: BUILD_DIR (default build), GUI_BUILD_DIR (default BUILD_DIR), HIGHLIGHT (a kernel
# to select in the table; none by default), SELECT (the rubber-band window, default the
# backward pass of the first step), TRACE (where the trace goes).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${1:-docs/gui-timeline.png}
TRACE=${TRACE:-/tmp/tunescope-gui-screenshot.json}

GUI_BUILD_DIR=${GUI_BUILD_DIR:-$BUILD_DIR}
for target in "$BUILD_DIR:tunescope" "$GUI_BUILD_DIR:tunescope-gui"; do
  dir=${target%%:*} name=${target#*:}
  if [ ! -x "$dir/$name" ]; then
    cmake -S . -B "$dir" >/dev/null
    cmake --build "$dir" --target "$name" -j"$(nproc)"
  fi
done
command -v xvfb-run >/dev/null || { echo "gui-screenshot: xvfb-run missing (scripts/install-deps.sh)" >&2; exit 1; }

"$BUILD_DIR/tunescope" profile --model resnet18-small --data fake --batch 32 --fake-count 256 \
  --steps 2 --warmup 1 --trace "$TRACE" >/dev/null
mkdir -p "$(dirname "$OUT")"
# A private config dir keeps the screenshot run out of the user's recent files.
XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
  "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 ${HIGHLIGHT:+--highlight "$HIGHLIGHT"} --select "${SELECT:-19%,49%}" \
  --screenshot "$OUT" "$TRACE"
echo "gui-screenshot: $OUT"
