#!/usr/bin/env python3
"""Compares two metrics.jsonl files record by record (same steps, same splits).

  compare_metrics.py A B --rtol R   loss, nll, grad_norm, token_accuracy, exact_match agree within R
                                    relative (docs/scaling.md explains the tolerance)
  compare_metrics.py A B --exact    every field but the timings is bit-identical
  --until S                         only the records of steps <= S
Prints the largest relative difference; exits 1 on a mismatch.
"""
import argparse
import json
import sys

TIMING = {"tokens_per_s", "time_s"}
NUMERIC = ["loss", "nll", "grad_norm", "token_accuracy", "exact_match"]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--until", type=int)
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    if args.until is not None:
        a = [r for r in a if r["step"] <= args.until]
        b = [r for r in b if r["step"] <= args.until]
    if [(r["split"], r["step"]) for r in a] != [(r["split"], r["step"]) for r in b]:
        print("the records differ in their steps or splits")
        return 1
    if not a:
        print("no records")
        return 1
    worst, where = 0.0, ""
    for ra, rb in zip(a, b):
        if args.exact:
            fa = {k: v for k, v in ra.items() if k not in TIMING}
            fb = {k: v for k, v in rb.items() if k not in TIMING}
            if fa != fb:
                print(f"step {ra['step']} ({ra['split']}) differs: {fa} vs {fb}")
                return 1
            continue
        for k in NUMERIC:
            if k not in ra and k not in rb:
                continue
            x, y = ra.get(k), rb.get(k)
            if x is None or y is None:
                print(f"step {ra['step']} {k}: {x} vs {y}")
                return 1
            rel = abs(x - y) / max(abs(x), abs(y), 1e-12)
            if rel > worst:
                worst, where = rel, f"step {ra['step']} ({ra['split']}) {k}: {x} vs {y}"
    if args.exact:
        print(f"{len(a)} records bit-identical")
        return 0
    print(f"{len(a)} records, largest relative difference {worst:.3g} ({where})")
    return 0 if worst <= args.rtol else 1


if __name__ == "__main__":
    sys.exit(main())
