#!/usr/bin/python3
"""Training-step speed of scalelab against today's peers and against the FMA peak, in one run.

Peers (bench/peers/setup.sh installs them into a virtual environment, build/peers-venv):
PyTorch 2 eager, PyTorch 2 torch.compile, and JAX jit, each a port of the same step
(bench/peers/peer_step.py: the model read from scalelab's initial checkpoint, the same batch,
loss, clipping and Adam, dropout off). For each configuration and thread count: the FP32 FMA
peak (train_step_bench's fma_peak, in the same run), scalelab (train_step_bench, median of
--repeats), then each peer (median of --repeats timed steps). Per engine: target tokens/s, model
GFLOP/s as a fraction of the FMA peak (read before and after the engines of a thread count, the
higher reading kept), and the ratio to the fastest peer of the row.

The same-step check: bench/train_step_check writes scalelab's initial weights, batch and the loss
after 3 steps; every peer process first runs the same 3 steps from those weights and its loss after
them must agree with scalelab's to --tolerance relative (1e-4), else the script fails (exit 1)
after printing the table.

bf16 (--precision ... bf16): scalelab with matmul_precision = "bf16" against each peer's own
mixed precision (peer_step.py --precision bf16: PyTorch autocast, JAX bf16 operands), the FMA peak
still the f32 one; measured only where scalelab's matmul probe runs oneDNN's bf16 matmul for
matmul_precision = "bf16" (`scalelab info`), elsewhere the output says so. The bf16 same-step check
compares each peer's loss after 3 steps with scalelab's bf16 loss (train_step_check's "bf16") to
--bf16-tolerance relative. Per configuration and thread count the output also gives scalelab's bf16
tokens/s over its own f32 ones. Model FLOPs per step are counted on paper (model/flops.hpp).
On a shared machine one table decides little: --rounds N measures the whole table N times, one
round after the other, prints every round's table and then, per row, scalelab's ratio to the
fastest peer over the rounds (median, range, and the rounds in which scalelab was ahead).
Usage: bench/compare_train_step.py [--build build] [--venv build/peers-venv] [--threads 1 2]
       [--precision f32 bf16] [--repeats 3] [--rounds 1] [--config NAME ...] [--json FILE]
--json FILE: {"info", "rows" (the last round), "rounds" (every round's rows), "summary" (per row
over the rounds), "failures"}.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cli_args import STANDARD_CONFIGS, OneLineArgumentParser, new_output_file, require_files  # noqa: E402
CONFIGS = STANDARD_CONFIGS
LABELS = {"encoder_decoder": "(a) encoder_decoder", "decoder_only": "(b) decoder_only",
          "large_decoder": "(c) large_decoder", "small": "small"}
PEERS = ["torch", "torch_compile", "jax"]
PEER_NAMES = {"torch": "PyTorch eager", "torch_compile": "torch.compile", "jax": "JAX jit"}


def scalelab_info(build):
    r = subprocess.run([os.path.join(build, "scalelab"), "info"], capture_output=True, text=True)
    if r.returncode != 0:  # the table is still worth printing; say what is missing
        return {"cpu": "(scalelab info failed: " + (r.stderr.strip() or "exit " + str(r.returncode)) + ")"}
    out = r.stdout
    info = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    # The bf16 matmul probe and the settings it decides (kernels/gemm_speed_probe.hpp), as one entry.
    info["matmul"] = " / ".join(line for line in out.splitlines() if line.startswith("matmul"))
    return info


def bf16_matmul_pays(info):
    """True when this process's probe found oneDNN's bf16 matmul no slower than its f32 one, so
    that matmul_precision = "bf16" runs it (scalelab info's "matmul_precision" line)."""
    return "\"bf16\" runs oneDNN's bf16 matmul" in info.get("matmul", "")


def run_scalelab(build, threads, configs, repeats, bf16):
    """Medians of train_step_bench: {run_name: benchmark}, with the FMA peak of this thread count."""
    names = "|".join(configs)
    precisions = "[01]" if bf16 else "0"
    regex = f"^(fma_peak/{threads}|train_step/({names})/{threads}/{precisions}/)" if configs else \
        f"^fma_peak/{threads}/"
    cmd = [os.path.join(build, "bench", "train_step_bench"), f"--benchmark_filter={regex}",
           f"--benchmark_repetitions={repeats}", "--benchmark_report_aggregates_only=true",
           "--benchmark_format=json"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        # One repetition has no aggregates: its single run is the median.
        if b.get("aggregate_name") == "median" or (repeats == 1 and b.get("run_type") == "iteration"):
            rows[b["run_name"].split("/min_time")[0].replace("/real_time", "")] = b
    return rows


def fma_peak(build, threads, repeats):
    """The FMA peak alone (GFLOP/s x 1e9), for a second reading after the peers."""
    return run_scalelab(build, threads, [], repeats, False)[f"fma_peak/{threads}"]["flops"]


def make_check(build, config, workdir):
    ckpt = os.path.join(workdir, f"{config}.safetensors")
    out = subprocess.run([os.path.join(build, "bench", "train_step_check"), config, ckpt],
                         check=True, capture_output=True, text=True).stdout
    path = os.path.join(workdir, f"{config}.json")
    with open(path, "w") as f:
        f.write(out)
    return path, ckpt, json.loads(out)


def run_peer(venv, framework, threads, precision, check_path, ckpt, repeats):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    cmd = [os.path.join(venv, "bin", "python"), os.path.join(HERE, "peers", "peer_step.py"),
           "--framework", framework, "--check", check_path, "--checkpoint", ckpt,
           "--threads", str(threads), "--precision", precision, "--repeats", str(repeats),
           "--warmup", "1"]
    if framework == "jax":
        # XLA has no thread-count switch for its CPU client: one thread is one CPU (taskset) and no
        # Eigen pool; two threads are the machine's two CPUs.
        if threads == 1:
            env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
            cmd = ["taskset", "-c", "0"] + cmd
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["exit " + str(r.returncode)])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure_round(args, build, venv, configs, precisions, checks):
    """One round: for each thread count, scalelab (train_step_bench), the peers of every row and the
    FMA peak again. Returns (rows, failures)."""
    rows, failures = [], []
    for t in args.threads:
        sl = run_scalelab(build, t, configs, args.repeats, "bf16" in precisions)
        peak_before = sl[f"fma_peak/{t}"]["flops"]
        block = []
        for c in configs:
            check_path, ckpt, check = checks[c]
            for precision in precisions:
                bench = sl[f"train_step/{c}/{t}/{0 if precision == 'f32' else 1}"]
                reference = check if precision == "f32" else check["bf16"]
                tolerance = args.tolerance if precision == "f32" else args.bf16_tolerance
                flop_step = bench["flops_per_step"]
                tokens = len(check["tgt_out"])
                engines = {"scalelab": bench["items_per_second"]}
                row = {"config": c, "threads": t, "precision": precision,
                       "gflop_per_step": flop_step / 1e9, "tokens_per_step": tokens,
                       "scalelab_loss_after_3": reference["loss_after"], "peers": {}}
                if precision == "bf16":
                    row["scalelab_bf16_over_f32"] = (bench["items_per_second"] /
                                                     sl[f"train_step/{c}/{t}/0"]["items_per_second"])
                for p in PEERS:
                    r = run_peer(venv, p, t, precision, check_path, ckpt, args.repeats)
                    row["peers"][p] = r
                    if "error" in r:
                        failures.append(f"{c}/{t}/{precision}: {p} failed: {r['error']}")
                        continue
                    rel = abs(r["loss_after"] - reference["loss_after"]) / abs(reference["loss_after"])
                    r["loss_rel_diff"] = rel
                    if not rel <= tolerance:
                        failures.append(
                            f"{c}/{t}/{precision}: {p}'s loss after 3 steps {r['loss_after']:.7g} against "
                            f"scalelab's {reference['loss_after']:.7g}: {rel:.2e} relative > {tolerance:g}")
                    engines[p] = r["tokens_per_s"]
                fastest_peer = max((engines[p] for p in PEERS if p in engines), default=float("nan"))
                row["engines"] = {e: {"tokens_per_s": v, "ratio_to_fastest_peer": v / fastest_peer}
                                  for e, v in engines.items()}
                row["_flop_per_token"] = flop_step / tokens
                block.append(row)
                print(f"# {c} / {t} thread(s) / {precision} done", file=sys.stderr, flush=True)
        # The peak is a ceiling: read it before and after this thread count's engines and keep the
        # higher reading (a busy moment lowers one reading; nothing raises it).
        peak_after = fma_peak(build, t, args.repeats)
        peak = max(peak_before, peak_after)
        for row in block:
            row["fma_peak_gflops"] = peak / 1e9
            row["fma_peak_readings_gflops"] = [peak_before / 1e9, peak_after / 1e9]
            for v in row["engines"].values():
                v["fraction_of_peak"] = v["tokens_per_s"] * row["_flop_per_token"] / peak
            del row["_flop_per_token"]
        rows += block
    return rows, failures


def print_table(rows, args):
    engines = ["scalelab"] + PEERS
    print("| config | threads | precision | FMA peak GFLOP/s | GFLOP/step | " +
          " | ".join(PEER_NAMES.get(e, e) for e in engines) + " |")
    print("|---|---|---|---|---|" + "---|" * len(engines))
    for r in rows:
        cells = []
        for e in engines:
            v = r["engines"].get(e)
            cells.append("failed" if v is None else
                         f"{v['tokens_per_s']:,.0f} · {v['fraction_of_peak']:.2f} · "
                         f"{v['ratio_to_fastest_peer']:.2f}×")
        print(f"| {LABELS[r['config']]} | {r['threads']} | {r['precision']} | {r['fma_peak_gflops']:.0f} | "
              f"{r['gflop_per_step']:.2f} | " + " | ".join(cells) + " |")
    readings = {r["threads"]: r["fma_peak_readings_gflops"] for r in rows}
    print("FMA peak readings, before and after each thread count's engines (GFLOP/s): " +
          "; ".join(f"{t} thread(s) {a:.0f} / {b:.0f}" for t, (a, b) in readings.items()))
    speedups = [r for r in rows if "scalelab_bf16_over_f32" in r]
    if speedups:
        print("scalelab bf16 over its own f32 tokens/s: " +
              "; ".join(f"{LABELS[r['config']]} / {r['threads']} thread(s) {r['scalelab_bf16_over_f32']:.2f}×"
                        for r in speedups))


def rounds_summary(rounds):
    """Per row (config, threads, precision): scalelab's ratio to the fastest peer of the row in each
    round, as (median, lowest, highest, rounds with scalelab ahead, rounds measured)."""
    summary = {}
    for rows in rounds:
        for r in rows:
            ratio = r["engines"]["scalelab"]["ratio_to_fastest_peer"]
            summary.setdefault((r["config"], r["threads"], r["precision"]), []).append(ratio)
    out = {}
    for key, ratios in summary.items():
        measured = [x for x in ratios if math.isfinite(x)]  # nan: every peer of the row failed
        if measured:
            out[key] = (statistics.median(measured), min(measured), max(measured),
                        sum(1 for x in measured if x > 1), len(measured))
    return out


def print_rounds_summary(rounds):
    summary = rounds_summary(rounds)
    print(f"Over {len(rounds)} rounds, scalelab's tokens/s over the fastest peer's of the row: the "
          "median, the range, and the rounds in which scalelab was ahead:")
    print("| config | threads | precision | median | range | rounds ahead |")
    print("|---|---|---|---|---|---|")
    for (c, t, p), (med, lo, hi, ahead, n) in summary.items():
        print(f"| {LABELS[c]} | {t} | {p} | {med:.2f}× | {lo:.2f}–{hi:.2f}× | {ahead} of {n} |")


def main():
    ap = OneLineArgumentParser(prog="compare_train_step", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--venv", default=None, help="the peers' environment (default: BUILD/peers-venv)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], choices=[1, 2],
                    help="thread counts (train_step_bench measures 1 and 2)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure the whole table this many times, one round after the other, and "
                         "summarise each row's ratio over the rounds (median, range, rounds ahead)")
    ap.add_argument("--config", action="append", choices=CONFIGS)
    ap.add_argument("--precision", nargs="+", choices=["f32", "bf16"], default=["f32", "bf16"],
                    help="f32 and/or bf16 rows (bf16 only where scalelab runs a bf16 matmul)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="f32 same-step criterion")
    ap.add_argument("--bf16-tolerance", type=float, default=1e-3, help="bf16 same-step criterion")
    ap.add_argument("--json", help="also write the rows to this new file (an existing one is not overwritten)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    venv = os.path.abspath(args.venv or os.path.join(build, "peers-venv"))
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        sys.exit(f"compare_train_step: no peers' environment at {venv}: run bench/peers/setup.sh")
    for bad in (b for b in (args.tolerance, args.bf16_tolerance) if not b > 0):
        sys.exit(f"compare_train_step: a tolerance of {bad} is not allowed: use a positive number")
    for key, value in (("--repeats", args.repeats), ("--rounds", args.rounds)):
        if value < 1:
            sys.exit(f"compare_train_step: {key} {value} is not allowed: use a whole number >= 1")
    json_path = new_output_file("compare_train_step", args.json) if args.json else None
    require_files("compare_train_step", build,
                  ["scalelab", "bench/train_step_bench", "bench/train_step_check"],
                  ["scalelab", "train_step_bench", "train_step_check"])
    configs = args.config or CONFIGS
    bf16_hw = bf16_matmul_pays(scalelab_info(build))
    precisions = [p for p in ("f32", "bf16") if p in args.precision and (p == "f32" or bf16_hw)]
    load_start = os.getloadavg()
    workdir = tempfile.mkdtemp(prefix="compare_train_step.", dir=build)
    checks = {c: make_check(build, c, workdir) for c in configs}
    rounds, failures = [], []
    for k in range(args.rounds):
        rows, round_failures = measure_round(args, build, venv, configs, precisions, checks)
        rounds.append(rows)
        failures += [f"round {k + 1}: {f}" if args.rounds > 1 else f for f in round_failures]
    load_end = os.getloadavg()
    info = scalelab_info(build)

    all_rows = [r for rows in rounds for r in rows]
    versions = sorted({r["peers"][p]["version"] for r in all_rows for p in PEERS
                       if "version" in r["peers"][p]})
    print(f"cpu: {info.get('cpu', '?')}; {os.cpu_count()} CPUs; gemm: {info.get('gemm', '?')}")
    print(f"peers: {', '.join(versions)}; scalelab {info.get('scalelab', '').strip() or '(this build)'}")
    print(f"load average (1 min) at the start {load_start[0]:.1f}, at the end {load_end[0]:.1f}")
    print("cells: target tokens/s · model GFLOP/s as a fraction of the f32 FMA peak · ratio to the "
          "fastest peer of the row; medians of " + str(args.repeats) + " (dropout off)")
    for k, rows in enumerate(rounds):
        if args.rounds > 1:
            print(f"\nround {k + 1} of {args.rounds}:")
        print_table(rows, args)
    if args.rounds > 1:
        print()
        print_rounds_summary(rounds)
    print()
    print("Same step (loss after 3 steps from scalelab's initial weights, relative to scalelab's loss "
          f"in the same precision; criteria f32 {args.tolerance:g}, bf16 {args.bf16_tolerance:g}):")
    for k, rows in enumerate(rounds):
        for r in rows:
            diffs = ", ".join(f"{PEER_NAMES[p]} {r['peers'][p]['loss_rel_diff']:.1e}" for p in PEERS
                              if "loss_rel_diff" in r["peers"][p])
            label = f"round {k + 1}: " if args.rounds > 1 else ""
            print(f"- {label}{r['config']} / {r['threads']} thread(s) / {r['precision']}: "
                  f"scalelab {r['scalelab_loss_after_3']:.6f}; {diffs}")
    if "bf16" in args.precision and not bf16_hw:
        print()
        print("bf16: not measured: oneDNN's bf16 matmul is not faster than its f32 one on this CPU "
              "(or absent), so bf16 would only round the operands before the f32 GEMM. scalelab info: "
              + info.get("matmul", "?"))
    if json_path:
        summary = [{"config": c, "threads": t, "precision": p, "median": med, "lowest": lo,
                    "highest": hi, "rounds_ahead": ahead, "rounds": n}
                   for (c, t, p), (med, lo, hi, ahead, n) in rounds_summary(rounds).items()]
        with open(json_path + ".partial", "w") as f:  # complete or absent, never half-written
            json.dump({"info": info, "rows": rounds[-1], "rounds": rounds, "summary": summary,
                       "failures": failures}, f, indent=1)
        os.replace(json_path + ".partial", json_path)
    if failures:
        print()
        for f in failures:
            print("FAIL:", f)
        sys.exit(1)


if __name__ == "__main__":
    main()
