#!/usr/bin/env bash
# Training-step throughput, scalelab vs PyTorch 1.13 and vs the FMA peak, measured in the same run.
# Usage: bench/compare_train_step.sh [build-dir] [extra args of compare_train_step.py]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
shift || true
exec /usr/bin/python3 "$here/bench/compare_train_step.py" --build "$build" "$@"
