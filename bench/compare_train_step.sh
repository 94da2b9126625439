#!/usr/bin/env bash
# Training-step throughput of scalelab against PyTorch 2 (eager, torch.compile) and JAX (jit), and
# against the FMA peak, all measured in the same run; fails when a peer's step differs from
# scalelab's (bench/compare_train_step.py). The peers: bench/peers/setup.sh.
# Usage: bench/compare_train_step.sh [build-dir] [extra args of compare_train_step.py]
# (a first argument starting with "-" is one of those: the build directory is then build/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
if [[ $# -gt 0 && "$1" != -* ]]; then
  build="$1"
  shift
fi
exec /usr/bin/python3 "$here/bench/compare_train_step.py" --build "$build" "$@"
