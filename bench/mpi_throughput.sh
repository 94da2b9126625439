#!/usr/bin/env bash
# Data-parallel throughput on this machine (docs/scaling.md): copy-task training, target tokens/s
# (summary.json), median of REPEATS runs each of
#   1 process x 1 thread,  2 ranks x 1 thread (mpirun -np 2),  1 process x 2 threads.
# Usage: bench/mpi_throughput.sh [BUILD_DIR] [REPEATS] [STEPS] [CONFIG]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
repeats="${2:-5}"
steps="${3:-200}"
config="${4:-$here/configs/copy.toml}"
bin="$build/scalelab"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
# EXTRA_SETS: more --set overrides (e.g. a smaller validation set, which the final evaluation reads).
args=(--config "$config" --set train.steps="$steps" --set train.eval_every=0 --set train.eval_examples=16
      --set train.log_every="$steps" --quiet ${EXTRA_SETS:-})
measure() {  # NAME THREADS LAUNCH...
  local name="$1" threads="$2"
  shift 2
  local values=()
  for i in $(seq 1 "$repeats"); do
    "$@" "$bin" train "${args[@]}" --set train.threads="$threads" --set train.run_dir="$tmp/$name-$i" >/dev/null
    values+=("$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['tokens_per_second'])" "$tmp/$name-$i/summary.json")")
  done
  python3 - "$name" "${values[@]}" <<'PY'
import statistics, sys
v = [float(x) for x in sys.argv[2:]]
print(f"{sys.argv[1]:<24} median {statistics.median(v):8.0f} tok/s   runs: {' '.join(f'{x:.0f}' for x in v)}")
PY
}
uptime
measure "1 process x 1 thread" 1 env
measure "2 ranks x 1 thread" 1 mpirun --oversubscribe --bind-to none -np 2
measure "1 process x 2 threads" 2 env
uptime
