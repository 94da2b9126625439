#!/usr/bin/env bash
# Training-step throughput of scalelab against PyTorch 2 (eager, torch.compile) and JAX (jit), and
# against the FMA peak, all measured in the same run; fails when a peer's step differs from
# scalelab's (bench/compare_train_step.py). The peers: bench/peers/setup.sh.
# Usage: bench/compare_train_step.sh [build-dir] [extra args of compare_train_step.py]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
shift || true
exec /usr/bin/python3 "$here/bench/compare_train_step.py" --build "$build" "$@"
