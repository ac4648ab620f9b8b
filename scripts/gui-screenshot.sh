#!/usr/bin/env bash
# Renders tunescope-gui on a real profile trace under Xvfb and saves the window to
# docs/gui-timeline.png (the README's screenshot) and the issue-25 streams-2 async trace
# to docs/gui-timeline-streams.png (both lanes with their nested ranges, zoomed to
# the middle of the run); then runs a tiny real tune and saves
# its Candidates tab to docs/gui-candidates.png and its baseline vs best Compare tab to
# docs/gui-compare.png; finally runs a tune from the Run tab and saves the finished tab to
# docs/gui-run.png; and a merged trace of two ranks (two lenet5 profiles marked as ranks
# by scripts/set-rank-metadata.py, merged by `tunescope merge-traces`) to
# docs/gui-timeline-ranks.png. Builds what it needs if missing.
# Usage: scripts/gui-screenshot.sh [output.png]
# Env: BUILD_DIR (default build), GUI_BUILD_DIR (default BUILD_DIR), HIGHLIGHT (a kernel
# to select in the table; none by default), SELECT (the rubber-band window, default the
# backward pass of the first step), TRACE (where the trace goes), CANDIDATES_OUT and
# COMPARE_OUT (the other two pictures; empty skips the tune), RUN_OUT (the Run tab; empty
# skips it), RUN_ROUNDS_OUT (the Run tab during a resnet18-small tune's interleaved rounds,
# at round RUN_ROUNDS_AT, default 8; empty skips it), STREAMS_OUT (the streams-2 picture;
# empty skips it), CRITICAL_PATH_OUT (a
# lenet5 streams-2 async trace with its critical path and first finding shown,
# docs/gui-critical-path.png; empty skips it), RANKS_OUT (the 2-rank picture; empty
# skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${1:-docs/gui-timeline.png}
TRACE=${TRACE:-/tmp/tunescope-gui-screenshot.json}
CANDIDATES_OUT=${CANDIDATES_OUT-docs/gui-candidates.png}
COMPARE_OUT=${COMPARE_OUT-docs/gui-compare.png}
RUN_OUT=${RUN_OUT-docs/gui-run.png}
RUN_ROUNDS_OUT=${RUN_ROUNDS_OUT-docs/gui-run-rounds.png}
STREAMS_OUT=${STREAMS_OUT-docs/gui-timeline-streams.png}
CRITICAL_PATH_OUT=${CRITICAL_PATH_OUT-docs/gui-critical-path.png}
RANKS_OUT=${RANKS_OUT-docs/gui-timeline-ranks.png}

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

if [ -n "$STREAMS_OUT" ]; then
  # The concurrency question: do the two streams overlap, and the update with the next step?
  STREAMS_TRACE=${TRACE%.json}-streams.json
  "$BUILD_DIR/tunescope" profile --model resnet18-small --data fake --batch 32 --steps 4 --streams 2 \
    --async-update --trace "$STREAMS_TRACE" >/dev/null
  XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
    "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --view "${STREAMS_VIEW:-48%,76%}" \
    --screenshot "$STREAMS_OUT" "$STREAMS_TRACE"
  echo "gui-screenshot: $STREAMS_OUT"
fi

if [ -n "$CRITICAL_PATH_OUT" ]; then
  # analyze's critical path and findings (docs/ANALYZE.md): the first finding activated.
  PATH_TRACE=${TRACE%.json}-critical-path.json
  "$BUILD_DIR/tunescope" profile --model lenet5 --data fake --batch 64 --fake-count 1024 --warmup 2 \
    --steps 4 --streams 2 --async-update --threads 2 --trace "$PATH_TRACE" >/dev/null
  XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
    "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --finding 1 --screenshot "$CRITICAL_PATH_OUT" "$PATH_TRACE"
  echo "gui-screenshot: $CRITICAL_PATH_OUT"
fi

if [ -n "$CANDIDATES_OUT$COMPARE_OUT" ]; then
  # A fresh DB each time: ResultsDb appends, and the picture should show one tune.
  TUNE_DIR=$(mktemp -d)
  trap 'rm -rf "$TUNE_DIR"' EXIT
  "$BUILD_DIR/tunescope" tune --model lenet5 --data fake --batch 32 --fake-count 512 --steps 5 --warmup 1 \
    --threads-list 1,2 --db "$TUNE_DIR/results.sqlite" --trace-dir "$TUNE_DIR/traces" -o "$TUNE_DIR/tuned.json" >/dev/null
  if [ -n "$CANDIDATES_OUT" ]; then
    # The DB's folder holds traces/best.json and baseline.json: the view maps them itself.
    XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
      "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --row 1 --screenshot "$CANDIDATES_OUT" "$TUNE_DIR/results.sqlite"
    echo "gui-screenshot: $CANDIDATES_OUT"
  fi
  if [ -n "$COMPARE_OUT" ]; then
    XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
      "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --compare "$TUNE_DIR/traces/best.json" \
      --screenshot "$COMPARE_OUT" "$TUNE_DIR/traces/baseline.json"
    echo "gui-screenshot: $COMPARE_OUT"
  fi
fi

if [ -n "$RUN_OUT" ]; then
  # The Run tab runs the CLI found next to tunescope-gui, else on PATH. A fixed folder,
  # emptied first, so the form shows short paths and the DB holds this tune only.
  RUN_DIR=/tmp/tunescope-run
  rm -rf "$RUN_DIR"
  PATH="$(cd "$BUILD_DIR" && pwd):$PATH" XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
    "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --run-tune "$RUN_DIR" --run-options "--fake-count 512" \
    --screenshot "$RUN_OUT"
  echo "gui-screenshot: $RUN_OUT"
fi

if [ -n "$RUN_ROUNDS_OUT" ]; then
  # The Run tab while a resnet18-small tune's interleaved rounds run: the status line
  # gives the round, the members still racing and the rounds that would decide them.
  RUN_DIR=/tmp/tunescope-run-rounds
  rm -rf "$RUN_DIR"
  PATH="$(cd "$BUILD_DIR" && pwd):$PATH" XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
    "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --run-tune "$RUN_DIR" --run-model resnet18-small \
    --run-options "--fake-count 512 --algorithms direct,gemm" \
    --screenshot-at-round "${RUN_ROUNDS_AT:-8}" --screenshot "$RUN_ROUNDS_OUT"
  echo "gui-screenshot: $RUN_ROUNDS_OUT"
fi

if [ -n "$RANKS_OUT" ]; then
  # Two one-process runs stand in for two ranks until the MPI run writes its own: rank 1's
  # clock offset lines its first event up with rank 0's (what a ping-pong would measure
  # had they run at once); the uncertainty is a stand-in figure.
  RANKS_DIR=$(mktemp -d)
  for rank in 0 1; do
    "$BUILD_DIR/tunescope" profile --model lenet5 --data fake --batch 32 --fake-count 256 \
      --steps 2 --warmup 1 --trace "$RANKS_DIR/own$rank.json" >/dev/null
    scripts/set-rank-metadata.py "$RANKS_DIR/own$rank.json" "$RANKS_DIR/t.rank$rank.json" \
      --rank "$rank" --world-size 2 --align-to "$RANKS_DIR/own0.json" \
      $([ "$rank" = 1 ] && echo --uncertainty-ns 2000)
  done
  "$BUILD_DIR/tunescope" merge-traces "$RANKS_DIR/merged.json" "$RANKS_DIR/t.rank0.json" \
    "$RANKS_DIR/t.rank1.json" >/dev/null
  XDG_CONFIG_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1920x1200x24" \
    "$GUI_BUILD_DIR/tunescope-gui" --size 1600x1000 --screenshot "$RANKS_OUT" "$RANKS_DIR/merged.json"
  rm -rf "$RANKS_DIR"
  echo "gui-screenshot: $RANKS_OUT"
fi
