#!/usr/bin/env python3
"""PyTorch 1.13's attention, softmax(Q Kᵀ · s) V with autograd, timed as attention_bench times the
flash kernel (same shapes, same flop convention), and a summary of both runs.

  torch_attention.py speed [--n 128 512 2048] [--threads 1 2] [--reps 3]
      JSON lines: n, threads, seconds (median forward+backward), gflops, openblas core.
  torch_attention.py peak-memory N heads batch
      JSON: seconds and peak resident memory of one forward+backward (batch×heads×N×64).
  torch_attention.py summarize cpp.json torch_default.jsonl torch_forced.jsonl [memory.jsonl]
      Markdown tables: GFLOP/s, fraction of the FMA peak, flash / PyTorch (the faster of the two
      OpenBLAS settings).

Flops: 4·N²·d forward + 10·N²·d backward per (batch, head), the FlashAttention-2 convention.
"""
import argparse
import ctypes
import json
import math
import resource
import statistics
import sys
import time

BATCH, HEADS, DIM = 8, 8, 64


def openblas_core():
    """The OpenBLAS kernel set PyTorch's BLAS runs with (OPENBLAS_CORETYPE can force it)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line and "/" in line}
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return "reference BLAS"


def attention_step(torch, q, k, v, dout, scale):
    p = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * scale, dim=-1)
    out = torch.matmul(p, v)
    out.backward(dout)
    for t in (q, k, v):
        t.grad = None


def make_inputs(torch, batch, heads, n):
    torch.manual_seed(0)
    q, k, v = (torch.randn(batch, heads, n, DIM, requires_grad=True) for _ in range(3))
    return q, k, v, torch.randn(batch, heads, n, DIM)


def speed(args):
    import torch
    core = None
    for n in args.n:
        for threads in args.threads:
            torch.set_num_threads(threads)
            q, k, v, dout = make_inputs(torch, BATCH, HEADS, n)
            attention_step(torch, q, k, v, dout, 1 / math.sqrt(DIM))  # warm-up
            core = core or openblas_core()
            times = []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                attention_step(torch, q, k, v, dout, 1 / math.sqrt(DIM))
                times.append(time.perf_counter() - t0)
            seconds = statistics.median(times)
            flops = 14.0 * n * n * DIM * BATCH * HEADS
            print(json.dumps({"n": n, "threads": threads, "seconds": seconds,
                              "gflops": flops / seconds / 1e9, "openblas_core": core,
                              "torch": torch.__version__}), flush=True)


def peak_memory(args):
    import torch
    torch.set_num_threads(args.threads)
    q, k, v, dout = make_inputs(torch, args.batch, args.heads, args.n)
    t0 = time.perf_counter()
    attention_step(torch, q, k, v, dout, 1 / math.sqrt(DIM))
    seconds = time.perf_counter() - t0
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(json.dumps({"n": args.n, "heads": args.heads, "batch": args.batch, "d": DIM,
                      "kernel": "pytorch", "pass": "fwdbwd", "threads": args.threads,
                      "seconds": seconds, "peak_rss_gib": peak_gib}))


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def summarize(args):
    with open(args.cpp) as f:
        cpp = json.load(f)["benchmarks"]
    peak = {}
    flash = {}
    for b in cpp:
        name = b["name"].split("/")
        if name[0] == "BM_FmaPeak":
            peak[int(name[1])] = b["GFLOPs"]
        elif name[0] == "BM_FlashForwardBackward":
            flash[(int(name[1]), int(name[2]))] = b["GFLOPs"]
    torch_runs = {}
    for path in args.torch:
        for r in read_jsonl(path):
            key = (r["n"], r["threads"])
            torch_runs.setdefault(key, []).append(r)
    print(f"FMA peak (same run): 1 thread {peak.get(1, 0):.1f} GFLOP/s, "
          f"2 threads {peak.get(2, 0):.1f} GFLOP/s\n")
    print("| N | threads | flash GFLOP/s | flash / peak | PyTorch GFLOP/s (core) | PyTorch / peak "
          "| flash / PyTorch |")
    print("|---|---|---|---|---|---|---|")
    for (n, threads), g in sorted(flash.items()):
        runs = torch_runs.get((n, threads), [])
        best = max(runs, key=lambda r: r["gflops"]) if runs else None
        others = ", ".join(f"{r['openblas_core']} {r['gflops']:.1f}" for r in runs)
        p = peak.get(threads, float("nan"))
        if best:
            print(f"| {n} | {threads} | {g:.1f} | {g / p:.2f} | {best['gflops']:.1f} ({others}) "
                  f"| {best['gflops'] / p:.2f} | {g / best['gflops']:.1f}× |")
        else:
            print(f"| {n} | {threads} | {g:.1f} | {g / p:.2f} | – | – | – |")
    if args.memory:
        print("\n| run | N | heads | batch | pass | threads | seconds | peak RSS GiB |")
        print("|---|---|---|---|---|---|---|---|")
        for r in read_jsonl(args.memory):
            secs = r.get("seconds", r.get("forward_s", 0) + r.get("backward_s", 0))
            print(f"| {r['kernel']} | {r['n']} | {r['heads']} | {r['batch']} | {r['pass']} "
                  f"| {r['threads']} | {secs:.2f} | {r['peak_rss_gib']:.3f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--n", type=int, nargs="+", default=[128, 512, 2048])
    s.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    s.add_argument("--reps", type=int, default=3)
    m = sub.add_parser("peak-memory")
    m.add_argument("n", type=int)
    m.add_argument("heads", type=int)
    m.add_argument("batch", type=int)
    m.add_argument("--threads", type=int, default=2)
    r = sub.add_parser("summarize")
    r.add_argument("cpp")
    r.add_argument("torch", nargs="+")
    r.add_argument("--memory")
    args = parser.parse_args()
    {"speed": speed, "peak-memory": peak_memory, "summarize": summarize}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
