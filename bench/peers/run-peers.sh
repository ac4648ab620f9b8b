#!/usr/bin/env bash
# tunescope beside PyTorch (CPU), the table of docs/BENCHMARKS.md "Peers":
#   bench/peers/run-peers.sh BUILD_DIR [--threads N] [--quick] [--device cpu|cuda]
# Needs the built tunescope target and PyTorch for the system python3 (Debian
# python3-torch, installed here with apt-get when missing and allowed), or for $PYTHON.
# Takes about 10 minutes on 2 cores (--quick: one short round, to check the script).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/peers/run-peers.sh BUILD_DIR [--threads N] [--quick] [--device cpu|cuda]}
shift
python=${PYTHON:-/usr/bin/python3}
if ! "$python" -c 'import torch' 2>/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "peers: installing python3-torch (Debian) for the PyTorch side" >&2
    apt-get install -y -q python3-torch >&2 || true
  fi
  if ! "$python" -c 'import torch' 2>/dev/null; then
    echo "peers: skipped: $python has no torch and python3-torch could not be installed" >&2
    exit 0
  fi
fi
exec "$python" bench/peers/peers.py --build "$build" "$@"
