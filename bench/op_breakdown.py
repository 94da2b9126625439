#!/usr/bin/python3
"""Where a training step's time goes: perf samples of train_step_bench, grouped by operation.

Runs `perf record -e cpu-clock -g` on one train_step_bench configuration (1 thread by default), then
walks each sample's call stack from the leaf up and charges the sample to the first frame that names
an operation (so a memmove inside the flash kernel counts as attention). oneDNN's JIT code has no
symbols or frame pointers: a leaf in JIT code or libdnnl is GEMM. Samples are counted only while the
process runs, so the shares hold on a loaded machine too (the absolute time does not).

With --top N, also lists the N leaf functions that take the most samples outside GEMM and attention
(where the per-step overhead is).

Usage: bench/op_breakdown.py [--build build] [--config small] [--threads 1] [--precision 0] [--seconds 3]
                             [--top 0]
"""
import argparse
import collections
import os
import re
import subprocess
import tempfile

# (category, regex on the symbol), first match from the leaf up wins.
CATEGORIES = [
    ("attention (flash)", r"flash_|ForwardUnit|BackwardUnit|N_\w+::Gemm|attention_"),
    ("GEMM (oneDNN)", r"scalelab::gemm|dnnl|Linear<float>::forward_gemm"),
    ("layernorm", r"[Ll]ayer[Nn]orm|layernorm"),
    ("dropout", r"Dropout"),
    ("activation", r"activation_|relu_rows|mask_rows"),  # the ReLU and its mask after a GEMM band
    ("bias add / bias gradient", r"add_row_vector|add_column_sums"),
    ("loss", r"cross_entropy"),
    ("optimizer + clipping", r"Optimizer|clip_grad|zero_grad"),
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--config", default="small")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", type=int, default=0, help="0 f32 GEMMs, 1 bf16")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--top", type=int, default=0, help="list the N costliest leaf functions outside GEMM + attention")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        bench = os.path.join(args.build, "bench", "train_step_bench")
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-o", data, bench,
                        f"--benchmark_filter=train_step/{args.config}/{args.threads}/{args.precision}/",
                        f"--benchmark_min_time={args.seconds}"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True,
                                text=True, check=True).stdout
    counts = collections.Counter()
    leaves = collections.Counter()
    for block in script.split("\n\n"):
        stack = []
        for line in block.strip().splitlines():
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
            if m:
                stack.append((m.group(1), m.group(2)))
        if not stack or any("_dl_" in s for s, _ in stack):
            continue  # empty, or the dynamic loader at start-up
        category = classify(stack)
        counts[category] += 1
        if category not in ("GEMM (oneDNN)", "attention (flash)"):
            leaves[(category, stack[0][0])] += 1
    total = sum(counts.values())
    core = counts["GEMM (oneDNN)"] + counts["attention (flash)"]
    print(f"train_step/{args.config}, {args.threads} thread(s), precision {args.precision}: {total} samples")
    print("| operation | share of the step |")
    print("|---|---|")
    for name, n in counts.most_common():
        print(f"| {name} | {100.0 * n / total:.1f} % |")
    print(f"| **GEMM + attention** | **{100.0 * core / total:.1f} %** |")
    print(f"| **everything else (per-step overhead)** | **{100.0 * (total - core) / total:.1f} %** |")
    if args.top > 0:
        print()
        print("| leaf function (outside GEMM + attention) | category | share of the step |")
        print("|---|---|---|")
        for (category, sym), n in leaves.most_common(args.top):
            print(f"| `{sym[:90]}` | {category} | {100.0 * n / total:.1f} % |")


if __name__ == "__main__":
    main()
