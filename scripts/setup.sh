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
  libxsmm-dev  # bench/gemm_table's libxsmm column (docs/performance.md); the engine does not link it
  python3 python3-numpy python3-torch
  python3-venv python3-dev  # the Python package's venv and headers (docs/python.md)
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

# The Python package (docs/python.md): a venv in the build directory with the binding library and
# what its tests and the example notebook use, from PyPI (pinned; skipped when already there).
# CMake builds the extension module with that interpreter. Without network the module is not
# built and its tests say so.
venv="$build_dir/.venv"
python_packages=(nanobind==3.1.0 scikit-build-core==1.1.2 numpy==2.4.6 pytest==9.2.0
                 nbclient==0.11.0 nbformat==5.11.1 ipykernel==7.4.0 matplotlib==3.11.2)
python_args=()
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || echo "setup: cannot create $venv (python3-venv); the Python module is not built" >&2
fi
if [ -x "$venv/bin/python" ]; then
  if ! "$venv/bin/python" -c 'import nanobind, scikit_build_core, numpy, pytest, nbclient, ipykernel, matplotlib' 2>/dev/null; then
    echo "setup: installing ${python_packages[*]} into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${python_packages[@]}" ||
      echo "setup: pip install failed; the Python module may not be built" >&2
  fi
  python_args=(-DPython_EXECUTABLE="$venv/bin/python")
fi

cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${python_args[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
