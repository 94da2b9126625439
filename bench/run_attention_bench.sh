#!/bin/bash
# Attention speed and memory in one run: the FMA peak and the flash kernel (attention_bench), then
# PyTorch 1.13's softmax(QKᵀs)V with autograd under each BLAS setting, then peak memory, then the
# summary tables of docs/performance.md.
#
#   bench/run_attention_bench.sh [build-dir] [out-dir]
#
# PyTorch is measured (1) as installed (Debian's python3-torch uses libblas.so.3: the reference
# BLAS, or OpenBLAS if libopenblas0 is installed), (2) with OpenBLAS 0.3.21 (Debian's libopenblas0-pthread, unpacked into the build
# directory and put first on LD_LIBRARY_PATH for these runs only; the system is not changed) as
# auto-detected, and (3) with OPENBLAS_CORETYPE=Cooperlake. Ratios use the fastest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
out="${2:-$build/attention-bench}"
mkdir -p "$out"
python=/usr/bin/python3
bench="$build/bench/attention_bench"
[ -x "$bench" ] || { echo "build $bench first" >&2; exit 1; }

openblas_dir="$build/openblas/root/usr/lib/x86_64-linux-gnu/openblas-pthread"
if [ ! -e "$openblas_dir/libblas.so.3" ]; then
  mkdir -p "$build/openblas"
  (cd "$build/openblas" && apt-get download libopenblas0-pthread >/dev/null 2>&1 &&
    dpkg-deb -x libopenblas0-pthread_*.deb root)
fi

echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$bench" --benchmark_repetitions="${REPS:-3}" --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/cpp.json" --benchmark_out_format=json | tee "$out/cpp.txt"
# google-benchmark writes the aggregates as name_median: keep those for the summary.
$python - "$out/cpp.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["benchmarks"] = [dict(b, name=b["run_name"]) for b in d["benchmarks"]
                   if b.get("aggregate_name", "median") == "median"]
json.dump(d, open(sys.argv[1], "w"), indent=1)
EOF

echo "== PyTorch as installed (N <= 512: with the reference BLAS a step at 2048 takes ~100 s)"
$python "$here/torch_attention.py" speed --n 128 512 --reps 3 | tee "$out/torch_installed.jsonl"
echo "== PyTorch with OpenBLAS, auto-detected core"
LD_LIBRARY_PATH="$openblas_dir" $python "$here/torch_attention.py" speed --reps 3 | tee "$out/torch_openblas.jsonl"
echo "== PyTorch with OpenBLAS, OPENBLAS_CORETYPE=Cooperlake"
LD_LIBRARY_PATH="$openblas_dir" OPENBLAS_CORETYPE=Cooperlake \
  $python "$here/torch_attention.py" speed --reps 3 | tee "$out/torch_cooperlake.jsonl"

echo "== peak memory"
{
  "$bench" --peak-memory 8192 8 1 fwdbwd flash 2
  LD_LIBRARY_PATH="$openblas_dir" OPENBLAS_CORETYPE=Cooperlake \
    $python "$here/torch_attention.py" peak-memory 8192 8 1 --threads 2
  "$bench" --peak-memory 65536 8 1 fwd flash 2
} | tee "$out/memory.jsonl"

echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
$python "$here/torch_attention.py" summarize "$out/cpp.json" "$out/torch_installed.jsonl" \
  "$out/torch_openblas.jsonl" "$out/torch_cooperlake.jsonl" --memory "$out/memory.jsonl" |
  tee "$out/summary.md"
