#!/usr/bin/python3
"""Where a training step's time goes: perf samples of the standard step, grouped by operation.

Runs `perf record -e cpu-clock -g -k CLOCK_MONOTONIC` on bench/train_step_loop (1 thread by default)
and keeps only the samples inside the steady window the loop prints (after construction and warm-up,
whose first-touch page faults and initialisation are not a step's work). Each sample's call stack is
walked from the leaf up and the sample is charged to the first frame that names an operation (so a
memmove inside the flash kernel counts as attention). oneDNN's JIT code has no symbols or frame
pointers: a leaf in JIT code or libdnnl is GEMM. Samples are counted only while the process runs,
so the shares hold on a loaded machine too (the absolute time does not).

Then the rates: the step's linear-map flops over the GEMMs' share of its CPU time, and the attention
flops over attention's share (model/flops.hpp counts both), as GFLOP/s per CPU-second and as a
fraction of the FMA peak measured in the same run (train_step_bench's fma_peak).

With --top N, also lists the N leaf functions that take the most samples outside GEMM and attention
(where the per-step overhead is).

Usage: bench/op_breakdown.py [--build build] [--config small] [--threads 1] [--precision f32]
                             [--seconds 3] [--top 0]
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_args import STANDARD_CONFIGS, OneLineArgumentParser, number_in, require_files  # noqa: E402

# (category, regex on the symbol), first match from the leaf up wins.
CATEGORIES = [
    ("attention (flash)", r"flash_|ForwardUnit|BackwardUnit|N_\w+::Gemm|attention_"),
    ("GEMM (oneDNN)", r"scalelab::gemm|dnnl|Linear<float>::forward_gemm"),
    ("layernorm", r"[Ll]ayer[Nn]orm|layernorm"),
    ("dropout + residual add", r"Dropout|ResidualAdd"),
    ("activation", r"activation_|relu_rows|mask_rows"),  # the ReLU and its mask after a GEMM band
    ("bias add / bias gradient", r"add_row_vector|add_column_sums|ChunkPartials|AddChunkPartials|PartialsOfChunks|column_sums"),
    ("loss", r"cross_entropy"),
    ("optimizer + clipping", r"Optimizer|clip_grad|zero_grad|adam_update"),
    ("embedding + positions", r"Embedding|sinusoidal|positions"),
]


def classify(stack):
    """stack: list of (symbol, dso), leaf first."""
    leaf_dso = stack[0][1] if stack else ""
    if "[JIT]" in leaf_dso or "/perf-" in leaf_dso or "libdnnl" in leaf_dso:  # JIT code: a perf map
        return "GEMM (oneDNN)"
    for sym, _ in stack:
        for name, rx in CATEGORIES:
            if re.search(rx, sym):
                return name
    if stack and "kernel" in stack[0][1]:
        return "other: kernel (page faults, scheduling)"
    if stack and ("libc" in stack[0][1] or "libstdc++" in stack[0][1]):
        return "other: libc (malloc, memcpy)"
    if stack and "libgomp" in stack[0][1]:
        return "other: OpenMP fork/join"
    return "other: scalelab glue"


def fma_peak(build, threads):
    """The FP32 FMA peak at `threads` threads (flop/s, all threads), from train_step_bench."""
    bench = os.path.join(build, "bench", "train_step_bench")
    out = subprocess.run([bench, f"--benchmark_filter=^fma_peak/{threads}/", "--benchmark_format=json",
                          "--benchmark_repetitions=3"], capture_output=True, text=True, check=True).stdout
    runs = [b["flops"] for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs:
        raise SystemExit(f"op_breakdown: train_step_bench measured no fma_peak at {threads} thread(s)")
    return max(runs)


def main():
    ap = OneLineArgumentParser(prog="op_breakdown", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--config", default="small", choices=STANDARD_CONFIGS)
    ap.add_argument("--threads", type=int, default=1, choices=[1, 2],
                    help="threads (train_step_bench's FMA peak is measured at 1 and 2)")
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16"], help="train.matmul_precision")
    ap.add_argument("--seconds", type=number_in(0.01, 3600), default=3.0)
    ap.add_argument("--top", type=number_in(0, 10000, whole=True), default=0,
                    help="list the N costliest leaf functions outside GEMM + attention")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    require_files("op_breakdown", build, ["bench/train_step_loop", "bench/train_step_bench"],
                  ["train_step_loop", "train_step_bench"])
    if not shutil.which("perf"):
        sys.exit("op_breakdown: perf is not installed (Debian: apt-get install linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        loop = os.path.join(build, "bench", "train_step_loop")
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        run = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-k",
                              "CLOCK_MONOTONIC", "-o", data, loop, args.config, "--threads",
                              str(args.threads), "--precision", args.precision, "--seconds",
                              str(args.seconds)], env=env, capture_output=True, text=True)
        if run.returncode != 0:  # e.g. perf_event_paranoid forbids sampling: its last line says so
            last = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]
            sys.exit(f"op_breakdown: perf record of train_step_loop failed: {last}")
        window = json.loads(run.stdout.strip().splitlines()[-1])
        script = subprocess.run(["perf", "script", "-i", data, "-F", "time,ip,sym,dso", "--ns"],
                                capture_output=True, text=True, check=True).stdout
    begin, end = window["steady_begin_ns"] * 1e-9, window["steady_end_ns"] * 1e-9
    counts = collections.Counter()
    leaves = collections.Counter()
    for block in script.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        stamp = re.search(r"([0-9]+\.[0-9]+):", lines[0])
        if not stamp or not begin <= float(stamp.group(1)) <= end:
            continue  # outside the steady window: construction, warm-up, exit
        stack = []
        for line in lines[1:]:
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
            if m:
                stack.append((m.group(1), m.group(2)))
        if not stack:
            continue
        category = classify(stack)
        counts[category] += 1
        if category not in ("GEMM (oneDNN)", "attention (flash)"):
            leaves[(category, stack[0][0])] += 1
    total = sum(counts.values())
    if total == 0:
        raise SystemExit("op_breakdown: perf kept no sample inside the steady window; "
                         "try a longer --seconds")
    core = counts["GEMM (oneDNN)"] + counts["attention (flash)"]
    step = window["seconds_per_step"]
    print(f"train_step/{args.config}, {args.threads} thread(s), {args.precision}, {window['simd']}: "
          f"{window['steps']} steady steps of {1e3 * step:.2f} ms, {total} samples")
    print("| operation | share of the step |")
    print("|---|---|")
    for name, n in counts.most_common():
        print(f"| {name} | {100.0 * n / total:.1f} % |")
    print(f"| **GEMM + attention** | **{100.0 * core / total:.1f} %** |")
    print(f"| **everything else (per-step overhead)** | **{100.0 * (total - core) / total:.1f} %** |")
    peak = fma_peak(build, args.threads) / args.threads  # per CPU-second
    cpu_seconds = step * args.threads
    print()
    print(f"FMA peak, same run: {peak / 1e9:.1f} GFLOP/s per CPU-second")
    print("| part | matrix flops per step | GFLOP/s per CPU-second | fraction of the FMA peak |")
    print("|---|---|---|---|")
    parts = [("linear maps (GEMM)", window["linear_flops_per_step"], counts["GEMM (oneDNN)"]),
             ("attention", window["attention_flops_per_step"], counts["attention (flash)"]),
             ("whole step", window["flops_per_step"], total)]
    for name, flops, n in parts:
        if n == 0:
            continue
        rate = flops / (cpu_seconds * n / total)
        print(f"| {name} | {flops / 1e9:.3f} G | {rate / 1e9:.1f} | {rate / peak:.2f} |")
    if args.top > 0:
        print()
        print("| leaf function (outside GEMM + attention) | category | share of the step |")
        print("|---|---|---|")
        for (category, sym), n in leaves.most_common(args.top):
            print(f"| `{sym[:90]}` | {category} | {100.0 * n / total:.1f} % |")


if __name__ == "__main__":
    main()
