#!/usr/bin/env bash
# Training-step throughput, scalelab vs PyTorch 1.13, measured in the same run on the same machine.
# PyTorch runs as installed and with OPENBLAS_CORETYPE=Cooperlake; the faster is the peer.
# Usage: bench/compare_train_step.sh [build-dir]   (median of 5 steps each, 1 and 2 threads)
# scalelab's lines end /0 (f32 GEMMs) and /1 (train.matmul_precision = bf16); PyTorch's --bf16
# line runs its CPU autocast to bfloat16 (linear layers in bf16 through oneDNN).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
for threads in 1 2; do
  echo "== threads $threads"
  OMP_NUM_THREADS=$threads "$build/bench/train_step_bench" --benchmark_filter="/$threads/[01]/" \
    --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.1 --benchmark_format=console 2>/dev/null | grep -E "median"
  /usr/bin/python3 "$here/bench/torch_train_step.py" --threads "$threads"
  OPENBLAS_CORETYPE=Cooperlake /usr/bin/python3 "$here/bench/torch_train_step.py" --threads "$threads"
  OPENBLAS_CORETYPE=Cooperlake /usr/bin/python3 "$here/bench/torch_train_step.py" --threads "$threads" --bf16
done
