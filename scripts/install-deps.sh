#!/usr/bin/env bash
# Installs every Debian package tunescope needs to build, test and run its default job.
# Idempotent: packages already present are skipped by apt-get. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libopenblas-dev libfftw3-dev zlib1g-dev libsqlite3-dev
  libdnnl-dev  # oneDNN: the onednn:* convolution algorithms (optional at build time)
  libonnx-dev libprotobuf-dev  # --model PATH.onnx (optional at build time)
  libopenmpi-dev openmpi-bin  # mpirun -np N tunescope train/profile: ranks over MPI (optional at build time)
  python3-onnx  # models/zoo/make-zoo.py: torch.onnx.export (python3-torch) needs it
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist
  qt6-base-dev xvfb xauth
  python3-venv
  clang libclang-rt-14-dev  # scripts/run-fuzz.sh: libFuzzer
  clang-format  # scripts/check-format.sh: the one formatting rule (.clang-format)
  clang-tidy  # scripts/check-tidy.sh: the lint rule (.clang-tidy)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
