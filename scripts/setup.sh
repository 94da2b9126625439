#!/usr/bin/env bash
# Installs every Debian package scalelab needs (build, tests, data), then configures and builds
# in Release. Idempotent: packages already present are not reinstalled.
# Usage: scripts/setup.sh [build-dir]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$here/build}"

packages=(
  build-essential cmake ninja-build pkg-config
  libdnnl-dev libomp-dev libhwy-dev
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-torch
  # PyTorch's BLAS: without OpenBLAS, Debian's torch falls back to the reference BLAS (~1.4 GFLOP/s),
  # which would make it a meaningless peer in the benchmarks.
  libopenblas0-pthread
  pocketsphinx-en-us bible-kjv bible-kjv-text
  gnuplot-nox
  chromium  # the report test opens report.html headless
  openmpi-bin libopenmpi-dev  # data-parallel training and the ledger over MPI (docs/scaling.md)
  clang-14 libclang-rt-14-dev  # libFuzzer targets and the sanitizer build (docs/robustness.md)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install Debian packages: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
