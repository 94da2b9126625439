#!/usr/bin/env python3
"""Validates a `scalelab check` output directory against docs/ledger.md (schema 1).

Used by tests/ledger/test_check_cli.sh and tests/ledger/test_check_quick.sh.

  ledger_schema.py validate DIR --mode quick|full --ids E1,E2 [--exact-ids]
      ledger.json lists the IDs (exactly these with --exact-ids), every claims/<ID>.json of
      ledger.json validates, summary.md has a row per ID. Prints one line per problem; exit 1 if any.
  ledger_schema.py same DIR_A DIR_B
      claims/*.json of both are identical except the "seconds" fields (bytes and parsed JSON).
  ledger_schema.py verdicts DIR
      prints "ID<TAB>verdict" per claim of ledger.json.
"""
import json
import os
import re
import sys

VERDICTS = {"holds", "holds only if", "does not hold", "not testable here"}
GROUPS = {"embedding", "attention", "beyond"}
PLOT_KINDS = {"lines", "bars", "heatmap"}
ARM_KINDS = {"train", "probe", "compute"}
PLOT_ID = re.compile(r"^[A-Za-z0-9._-]+$")


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_num_or_null(x):
    return x is None or is_num(x)


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def validate_claim(c, where, mode):
    errs = []

    def need(key, check, what):
        if key not in c:
            errs.append(f"{where}: missing key \"{key}\"")
            return False
        if not check(c[key]):
            errs.append(f"{where}: \"{key}\" = {json.dumps(c[key])[:120]} is not {what}")
            return False
        return True

    def s(x):
        return isinstance(x, str)

    def ne(x):
        return isinstance(x, str) and x != ""

    need("schema", lambda x: x == 1, "1")
    need("id", ne, "a non-empty string")
    need("group", lambda x: x in GROUPS, f"one of {sorted(GROUPS)}")
    for k in ("statement", "experiment", "criterion", "sentence"):
        need(k, ne, "a non-empty string")
    need("thresholds", lambda x: isinstance(x, dict) and all(is_num(v) for v in x.values()),
         "an object of numbers")
    need("mode", lambda x: x == mode, f"\"{mode}\"")
    need("provisional", lambda x: x is (mode == "quick"), "true in quick mode, false in full mode")
    need("facts", lambda x: isinstance(x, dict), "an object")
    need("seconds", lambda x: is_num(x) and x >= 0, "a number >= 0")
    if need("verdict", lambda x: x in VERDICTS, f"one of {sorted(VERDICTS)}"):
        if need("condition", s, "a string"):
            if (c["verdict"] == "holds only if") != (c["condition"] != ""):
                errs.append(f"{where}: condition must be non-empty exactly for \"holds only if\"")
        if need("reason", s, "a string"):
            if (c["verdict"] == "not testable here") != (c["reason"] != ""):
                errs.append(f"{where}: reason must be non-empty exactly for \"not testable here\"")
    if need("key_number", lambda x: x is None or isinstance(x, dict), "null or an object"):
        k = c["key_number"]
        if k is None:
            if c.get("verdict") != "not testable here":
                errs.append(f"{where}: key_number is null but the verdict is {c.get('verdict')}")
        else:
            for f, check, what in (("label", ne, "a non-empty string"), ("value", is_num_or_null, "a number or null"),
                                   ("text", s, "a string")):
                if f not in k or not check(k[f]):
                    errs.append(f"{where}: key_number.{f} missing or not {what}")
    # Rule 6: the verdict evaluated again with the seeds moved by their own spread; a verdict that
    # changes either way must say "Marginal" in its sentence, one that does not must not.
    if need("robustness", lambda x: isinstance(x, dict) and isinstance(x.get("flips"), bool), "an object with flips"):
        r = c["robustness"]
        for side in ("moved_down", "moved_up"):
            if not isinstance(r.get(side), dict) or r[side].get("verdict") not in VERDICTS:
                errs.append(f"{where}: robustness.{side}.verdict missing or not a verdict")
        if not errs:
            changed = any((r[side]["verdict"], r[side]["condition"]) != (c["verdict"], c["condition"])
                          for side in ("moved_down", "moved_up"))
            if changed != r["flips"]:
                errs.append(f"{where}: robustness.flips is {r['flips']} but the moved verdicts "
                            f"{'differ' if changed else 'agree'} with \"{c['verdict']}\"")
            if r["flips"] != ("Marginal:" in c.get("sentence", "")):
                errs.append(f"{where}: robustness.flips is {r['flips']} but the sentence "
                            f"{'does not say' if r['flips'] else 'says'} \"Marginal:\"")
    if need("arms", lambda x: isinstance(x, list) and len(x) > 0, "a non-empty list"):
        for i, a in enumerate(c["arms"]):
            w = f"{where}: arms[{i}]"
            if not isinstance(a, dict):
                errs.append(f"{w} is not an object")
                continue
            if not ne(a.get("name")):
                errs.append(f"{w}.name missing")
            if a.get("kind") not in ARM_KINDS:
                errs.append(f"{w}.kind = {a.get('kind')!r} not in {sorted(ARM_KINDS)}")
            if not isinstance(a.get("config"), dict):
                errs.append(f"{w}.config is not an object")
            elif a.get("kind") in ("train", "probe"):
                for sec in ("model", "data", "train"):
                    if not isinstance(a["config"].get(sec), dict):
                        errs.append(f"{w}.config.{sec} is not an object (resolved config)")
            if not isinstance(a.get("seeds"), list) or not all(is_int(x) for x in a["seeds"]):
                errs.append(f"{w}.seeds is not a list of integers")
    if need("measurements", lambda x: isinstance(x, list), "a list"):
        for i, m in enumerate(c["measurements"]):
            w = f"{where}: measurements[{i}]"
            if not isinstance(m, dict):
                errs.append(f"{w} is not an object")
                continue
            for f in ("name", "arm", "unit"):
                if not s(m.get(f)):
                    errs.append(f"{w}.{f} missing or not a string")
            if "x" not in m or not (m["x"] is None or is_num(m["x"]) or s(m["x"])):
                errs.append(f"{w}.x missing or not a number/null/string")
            vals = m.get("values")
            if not isinstance(vals, list) or not all(is_num_or_null(v) for v in vals):
                errs.append(f"{w}.values missing or not a list of numbers/nulls")
            for f in ("median", "min", "max"):
                if f not in m or not is_num_or_null(m[f]):
                    errs.append(f"{w}.{f} missing or not a number/null")
            if all(is_num(m.get(f)) for f in ("median", "min", "max")):
                if not (m["min"] <= m["median"] <= m["max"]):
                    errs.append(f"{w}: min <= median <= max violated")
    if need("plots", lambda x: isinstance(x, list), "a list"):
        for i, p in enumerate(c["plots"]):
            w = f"{where}: plots[{i}]"
            if not isinstance(p, dict):
                errs.append(f"{w} is not an object")
                continue
            if not s(p.get("id")) or not PLOT_ID.match(p["id"]):
                errs.append(f"{w}.id = {p.get('id')!r} missing or not [A-Za-z0-9._-]+")
            if p.get("kind") not in PLOT_KINDS:
                errs.append(f"{w}.kind = {p.get('kind')!r} not in {sorted(PLOT_KINDS)}")
            if not isinstance(p.get("series"), list):
                errs.append(f"{w}.series missing or not a list")
                continue
            for j, se in enumerate(p["series"]):
                if not isinstance(se, dict) or not s(se.get("label")) or not isinstance(se.get("points"), list):
                    errs.append(f"{w}.series[{j}] needs label and points")
                    continue
                for pt in se["points"]:
                    if not isinstance(pt, list) or len(pt) not in (2, 4) or not all(is_num_or_null(v) for v in pt):
                        errs.append(f"{w}.series[{j}]: point {pt!r} is not [x, y] or [x, y, lo, hi]")
                        break
            if p.get("kind") == "heatmap":
                if not isinstance(p.get("matrix"), list) or not isinstance(p.get("rows"), list) or not isinstance(p.get("cols"), list):
                    errs.append(f"{w}: heatmap needs rows, cols and matrix")
            if p.get("kind") == "bars" and not isinstance(p.get("cols"), list):
                errs.append(f"{w}: bars need cols")
    return errs


def validate_dir(d, mode, ids, exact):
    errs = []
    try:
        with open(os.path.join(d, "ledger.json")) as f:
            ledger = json.load(f)
    except Exception as e:  # noqa: BLE001
        return [f"{d}/ledger.json: {e}"]
    if ledger.get("schema") != 1:
        errs.append("ledger.json: schema is not 1")
    if ledger.get("mode") != mode:
        errs.append(f"ledger.json: mode {ledger.get('mode')!r} != {mode!r}")
    for k in ("version", "cpu"):
        if not isinstance(ledger.get(k), str):
            errs.append(f"ledger.json: {k} missing")
    if not is_num(ledger.get("seconds")):
        errs.append("ledger.json: seconds missing")
    listed = [c.get("id") for c in ledger.get("claims", [])]
    if exact and sorted(listed) != sorted(ids):
        errs.append(f"ledger.json lists {listed}, expected exactly {ids}")
    for i in ids:
        if i not in listed:
            errs.append(f"ledger.json does not list {i}")
    for c in ledger.get("claims", []):
        for k in ("id", "verdict", "condition", "provisional", "key_number"):
            if k not in c:
                errs.append(f"ledger.json: summary of {c.get('id')} lacks {k}")
        if c.get("verdict") not in VERDICTS:
            errs.append(f"ledger.json: {c.get('id')} verdict {c.get('verdict')!r}")
        path = os.path.join(d, "claims", f"{c.get('id')}.json")
        try:
            with open(path) as f:
                claim = json.load(f)
        except Exception as e:  # noqa: BLE001
            errs.append(f"{path}: {e}")
            continue
        errs += validate_claim(claim, path, mode)
        if claim.get("id") != c.get("id"):
            errs.append(f"{path}: id {claim.get('id')!r} != {c.get('id')!r}")
        if claim.get("verdict") != c.get("verdict"):
            errs.append(f"{path}: verdict differs from ledger.json's")
    try:
        with open(os.path.join(d, "summary.md")) as f:
            summary = f.read()
        for i in ids:
            rows = [l for l in summary.splitlines() if l.startswith(f"| {i} |")]
            if len(rows) != 1:
                errs.append(f"summary.md has {len(rows)} rows for {i}")
    except OSError as e:
        errs.append(f"summary.md: {e}")
    return errs


def drop_seconds(x):
    if isinstance(x, dict):
        return {k: drop_seconds(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [drop_seconds(v) for v in x]
    return x


SECONDS = re.compile(r'"seconds": -?[0-9.eE+-]+')


def same(a, b):
    errs = []
    fa = sorted(os.listdir(os.path.join(a, "claims")))
    fb = sorted(os.listdir(os.path.join(b, "claims")))
    if fa != fb:
        return [f"claims differ: {fa} vs {fb}"]
    for name in fa:
        ta = open(os.path.join(a, "claims", name)).read()
        tb = open(os.path.join(b, "claims", name)).read()
        if SECONDS.sub('"seconds": S', ta) != SECONDS.sub('"seconds": S', tb):
            errs.append(f"claims/{name}: the text differs beyond the seconds fields")
        if drop_seconds(json.loads(ta)) != drop_seconds(json.loads(tb)):
            errs.append(f"claims/{name}: the JSON differs beyond the seconds fields")
    return errs


def main(argv):
    if len(argv) >= 2 and argv[0] == "validate":
        d = argv[1]
        mode = argv[argv.index("--mode") + 1]
        ids = [i for i in argv[argv.index("--ids") + 1].split(",") if i]
        errs = validate_dir(d, mode, ids, "--exact-ids" in argv)
    elif len(argv) == 3 and argv[0] == "same":
        errs = same(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "verdicts":
        with open(os.path.join(argv[1], "ledger.json")) as f:
            for c in json.load(f)["claims"]:
                print(f"{c['id']}\t{c['verdict']}")
        return 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
