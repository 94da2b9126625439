#!/usr/bin/env python3
"""Compares two metrics.jsonl files record by record (same steps, same splits).

  compare_metrics.py A B --rtol R   loss, nll, grad_norm, token_accuracy, exact_match agree within R
                                    relative (docs/scaling.md explains the tolerance)
  compare_metrics.py A B --exact    every field but the timings is bit-identical
  --fields F,G,...                  compare only these of the five
  --accuracy-atol T                 token_accuracy and exact_match agree within T absolute instead
                                    (fractions of the tokens and examples: one example of 64 is
                                    0.016)
  --from S / --until S              only the records of steps >= S / <= S
  --split train|valid               only the records of this split
Prints the largest difference; exits 1 on a mismatch, 2 on bad arguments.
"""
import argparse
import json
import sys

TIMING = {"tokens_per_s", "time_s"}
NUMERIC = ["loss", "nll", "grad_norm", "token_accuracy", "exact_match"]
ACCURACY = {"token_accuracy", "exact_match"}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--fields", default=",".join(NUMERIC))
    ap.add_argument("--accuracy-atol", type=float)
    ap.add_argument("--from", dest="first", type=int)
    ap.add_argument("--until", type=int)
    ap.add_argument("--split", choices=["train", "valid"])
    args = ap.parse_args()
    fields = args.fields.split(",")
    unknown = [f for f in fields if f not in NUMERIC]
    if unknown:
        ap.error(f"--fields: {','.join(unknown)} is not one of {','.join(NUMERIC)}")
    if not args.exact and args.rtol is None:
        ap.error("give --rtol R or --exact")

    def keep(r):
        return ((args.first is None or r["step"] >= args.first)
                and (args.until is None or r["step"] <= args.until)
                and (args.split is None or r["split"] == args.split))

    a = [r for r in load(args.a) if keep(r)]
    b = [r for r in load(args.b) if keep(r)]
    if [(r["split"], r["step"]) for r in a] != [(r["split"], r["step"]) for r in b]:
        print("the records differ in their steps or splits")
        return 1
    if not a:
        print("no records")
        return 1
    worst_rel, where_rel, worst_abs, where_abs = 0.0, "", 0.0, ""
    for ra, rb in zip(a, b):
        if args.exact:
            fa = {k: v for k, v in ra.items() if k not in TIMING}
            fb = {k: v for k, v in rb.items() if k not in TIMING}
            if fa != fb:
                print(f"step {ra['step']} ({ra['split']}) differs: {fa} vs {fb}")
                return 1
            continue
        for k in fields:
            if k not in ra and k not in rb:
                continue
            x, y = ra.get(k), rb.get(k)
            if x is None or y is None:
                print(f"step {ra['step']} {k}: {x} vs {y}")
                return 1
            here = f"step {ra['step']} ({ra['split']}) {k}: {x} vs {y}"
            if k in ACCURACY and args.accuracy_atol is not None:
                if abs(x - y) > worst_abs:
                    worst_abs, where_abs = abs(x - y), here
                continue
            rel = abs(x - y) / max(abs(x), abs(y), 1e-12)
            if rel > worst_rel:
                worst_rel, where_rel = rel, here
    if args.exact:
        print(f"{len(a)} records bit-identical")
        return 0
    out = f"{len(a)} records, largest relative difference {worst_rel:.3g} ({where_rel or 'none'})"
    if args.accuracy_atol is not None:
        out += f", largest accuracy difference {worst_abs:.3g} ({where_abs or 'none'})"
    print(out)
    ok = worst_rel <= args.rtol and (args.accuracy_atol is None or worst_abs <= args.accuracy_atol)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
