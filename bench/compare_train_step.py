#!/usr/bin/python3
"""Training-step speed of scalelab against PyTorch 1.13 and against the FMA peak, in one run.

For each thread count: the FP32 FMA peak (train_step_bench's fma_peak) and the bf16 dot-product
peak (bf16_dot_peak: what bounds a bf16 GEMM without AMX), scalelab's four
configurations in f32 and with bf16 matmuls (train_step_bench, median of --repeats), and PyTorch's
(bench/torch_train_step.py) as installed, with OPENBLAS_CORETYPE=Cooperlake, and with CPU autocast
to bf16; the faster f32 PyTorch is the peer. Prints one markdown table (and --json for the rows).

Model FLOPs per step are counted on paper (src/scalelab/model/flops.hpp: matrix products only,
backward 2× forward, attention backward 2.5× its forward, causal attention half).
Usage: bench/compare_train_step.py [--build build] [--threads 1 2] [--repeats 5] [--config NAME ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ["encoder_decoder", "decoder_only", "large_decoder", "small"]


def run_scalelab(build, threads, configs, repeats):
    """Medians of train_step_bench over `repeats` repetitions: {name: seconds}, plus the FMA peak."""
    names = "|".join(configs)
    regex = f"^(fma_peak/{threads}|bf16_dot_peak/{threads}|train_step/({names})/{threads}/[01]/)"
    cmd = [os.path.join(build, "bench", "train_step_bench"), f"--benchmark_filter={regex}",
           f"--benchmark_repetitions={repeats}", "--benchmark_report_aggregates_only=true",
           "--benchmark_min_time=0.1", "--benchmark_format=json"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("error_occurred"):  # bf16_dot_peak without avx512bf16: reported as absent
            rows[b["run_name"]] = b
            continue
        # One repetition has no aggregates: its single run is the median.
        if b.get("aggregate_name") != "median" and not (repeats == 1 and b.get("run_type") == "iteration"):
            continue
        rows[b["run_name"]] = b
    return rows


def run_torch(threads, configs, repeats, coretype=None, bf16=False):
    env = dict(os.environ)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    cmd = ["/usr/bin/python3", os.path.join(HERE, "torch_train_step.py"), "--threads", str(threads),
           "--repeats", str(repeats)] + [a for c in configs for a in ("--config", c)]
    if bf16:
        cmd.append("--bf16")
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {r["config"]: r for r in map(json.loads, out.splitlines())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--config", action="append", choices=CONFIGS)
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    configs = args.config or CONFIGS
    rows = []
    dot_peaks = []  # (threads, FMA peak, bf16 dot-product peak or None)
    for t in args.threads:
        sl = run_scalelab(args.build, t, configs, args.repeats)
        peak = sl[f"fma_peak/{t}/real_time"]["flops"]
        dot = sl.get(f"bf16_dot_peak/{t}/real_time", {})
        dot_peaks.append((t, peak, None if dot.get("error_occurred") else dot.get("flops")))
        torch_installed = run_torch(t, configs, args.repeats)
        torch_cooper = run_torch(t, configs, args.repeats, "Cooperlake")
        torch_bf16 = run_torch(t, configs, args.repeats, "Cooperlake", bf16=True)
        for c in configs:
            f32 = sl[f"train_step/{c}/{t}/0/min_time:3.000/real_time"]
            bf16 = sl[f"train_step/{c}/{t}/1/min_time:3.000/real_time"]
            installed, cooper = torch_installed[c], torch_cooper[c]
            best = installed if installed["tokens_per_s"] >= cooper["tokens_per_s"] else cooper
            peer = best["tokens_per_s"]
            tokens = f32["items_per_second"] * f32["real_time"] / 1e3  # target tokens per step
            rows.append({
                "config": c, "threads": t, "fma_peak_gflops": peak / 1e9,
                "gflop_per_step": f32["flops_per_step"] / 1e9,
                "scalelab_tok_s": f32["items_per_second"], "scalelab_gflops": f32["model_flops"] / 1e9,
                "fraction_of_peak": f32["model_flops"] / peak,
                "steps_per_s": 1e3 / f32["real_time"],  # real_time is in ms (Unit(kMillisecond))
                "torch_tok_s": peer, "torch_setting": "installed" if best is installed else "Cooperlake",
                # On one thread, tokens per CPU-second of the busy thread: what a loaded machine
                # distorts least (the wall-clock figures need an idle machine).
                "scalelab_tok_cpu_s": tokens / (f32["cpu_time"] / 1e3) if t == 1 else None,
                "torch_tok_cpu_s": max(installed["tokens_per_cpu_s"], cooper["tokens_per_cpu_s"]) if t == 1 else None,
                "ratio_vs_torch": f32["items_per_second"] / peer,
                "scalelab_bf16_tok_s": bf16["items_per_second"],
                "bf16_over_f32": bf16["items_per_second"] / f32["items_per_second"],
                "torch_bf16_tok_s": torch_bf16[c]["tokens_per_s"],
            })
            print(f"# {c} / {t} thread(s) done", file=sys.stderr, flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)")
    print("| config | threads | FMA peak GFLOP/s | GFLOP/step | scalelab f32 tok/s (steps/s) | "
          "model GFLOP/s | of peak | PyTorch f32 tok/s | scalelab / PyTorch | scalelab bf16 tok/s | "
          "bf16 / f32 | PyTorch bf16 tok/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['config']} | {r['threads']} | {r['fma_peak_gflops']:.0f} | {r['gflop_per_step']:.2f} | "
              f"{r['scalelab_tok_s']:.0f} ({r['steps_per_s']:.1f}) | {r['scalelab_gflops']:.0f} | "
              f"{r['fraction_of_peak']:.2f} | {r['torch_tok_s']:.0f} ({r['torch_setting']}) | "
              f"{r['ratio_vs_torch']:.2f}× | {r['scalelab_bf16_tok_s']:.0f} | {r['bf16_over_f32']:.2f}× | "
              f"{r['torch_bf16_tok_s']:.0f} |")
    print()
    print("Peaks of the multiply-add instructions (a GEMM cannot beat its instruction's peak; the bf16 "
          "dot product vdpbf16ps is what a bf16 GEMM without AMX is built from):")
    for t, fma, dot in dot_peaks:
        if dot is None:
            print(f"- {t} thread(s): FMA {fma / 1e9:.0f} GFLOP/s; bf16 dot product: no avx512bf16 here")
        else:
            print(f"- {t} thread(s): FMA {fma / 1e9:.0f} GFLOP/s; bf16 dot product {dot / 1e9:.0f} GFLOP/s "
                  f"= {dot / fma:.2f}× the FMA peak")
    cpu_rows = [r for r in rows if r["scalelab_tok_cpu_s"]]
    if cpu_rows:
        print()
        print("| config (1 thread) | scalelab tok per CPU-s | PyTorch tok per CPU-s | ratio |")
        print("|---|---|---|---|")
        for r in cpu_rows:
            print(f"| {r['config']} | {r['scalelab_tok_cpu_s']:.0f} | {r['torch_tok_cpu_s']:.0f} | "
                  f"{r['scalelab_tok_cpu_s'] / r['torch_tok_cpu_s']:.2f}× |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
