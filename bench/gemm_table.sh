#!/usr/bin/env bash
# The GEMM table of docs/performance.md in one run: build/bench/gemm_table with Debian's oneDNN (as
# scalelab calls it) and libxsmm (when built with it), plus two libraries from PyPI loaded at run
# time: MKL (`mkl`) and oneDNN 3 (`onednn-cpu-gomp`, the GNU-OpenMP build). Those two live in a
# throwaway virtual environment (build/gemm-peers-venv), a benchmark's peers only: the engine never
# links them, and scripts/setup.sh does not install them.
#
# Usage: bench/gemm_table.sh [build-dir] [gemm_table arguments...]   (default build dir: build; a
# first argument starting with "-" is one of gemm_table's; --help prints this usage and gemm_table's)
# Takes ~5 min on 2 loaded cores (3 sweeps); prints the tables (Markdown) with the CPU and the FMA
# peak of every sweep.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
if [[ $# -gt 0 && "$1" != -* ]]; then
  build="$1"
  shift
fi
bin="$build/bench/gemm_table"
[[ -x "$bin" ]] || { echo "gemm_table.sh: $bin is missing: cmake --build $build --target gemm_table" >&2; exit 1; }
for arg in "$@"; do
  if [[ "$arg" == --help || "$arg" == -h ]]; then
    echo "usage: bench/gemm_table.sh [build-dir] [gemm_table arguments...]: the table with MKL and oneDNN 3 from PyPI (build/gemm-peers-venv)"
    exec "$bin" --help
  fi
done
# gemm_table checks its arguments before anything is installed or measured.
"$bin" "$@" --check-arguments

venv="$build/gemm-peers-venv"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
if [[ ! -e "$venv/lib/libmkl_rt.so.3" || ! -e "$venv/onednn3/lib/libdnnl.so.3" ]]; then
  pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input --quiet)
  "${pip[@]}" install mkl==2026.2.1
  # Its own prefix: oneDNN 3 and MKL wheels both put files under lib/.
  "${pip[@]}" install --prefix "$venv/onednn3" onednn-cpu-gomp==2023.2.0
fi
# MKL with GNU OpenMP, the runtime scalelab and oneDNN use (one thread pool, OMP_NUM_THREADS rules).
export MKL_THREADING_LAYER=GNU
export SCALELAB_BENCH_MKL="$venv/lib/libmkl_rt.so.3"
export SCALELAB_BENCH_ONEDNN3="$venv/onednn3/lib/libdnnl.so.3"
echo "uptime: $(uptime)"
# Passive: idle OpenMP threads sleep instead of spinning, so the CPU time the table counts is work.
OMP_WAIT_POLICY=passive nice -n 10 "$bin" "$@"
echo "uptime: $(uptime)"
