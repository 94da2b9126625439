#!/usr/bin/env python3
"""The tables docs/ledger.md quotes from a finished ledger directory (`scalelab check --out DIR`).

  scripts/ledger-tables.py DIR rates     training claims: verdict at each arm's own best learning
                                         rate beside the verdict at the shared rate (sensitivity),
                                         the key numbers, and each tuned arm's chosen rate
  scripts/ledger-tables.py DIR verdicts  every claim: verdict, condition, key number, marginal
  scripts/ledger-tables.py DIR compare OLD_TABLE.md
                                         the verdicts beside those of an earlier run, read from a
                                         Markdown table with columns | ID | claim | verdict | key number |

Only reads JSON; prints Markdown.
"""
import json
import sys
from pathlib import Path


def load(d):
    ledger = json.loads((Path(d) / "ledger.json").read_text())
    claims = {c["id"]: json.loads((Path(d) / "claims" / f"{c['id']}.json").read_text()) for c in ledger["claims"]}
    return ledger, claims


def verdict_text(v, cond, limit=70):
    t = v + (" " + cond if cond else "")
    return t if len(t) <= limit else t[: limit - 1] + "…"


def key(k):
    return "–" if not k else f"{k['label']}: {k['text']}"


def rates(ledger, claims):
    print("| ID | at each arm's best rate | key number | at the shared rate | key number | chosen rates (shared → best) |")
    print("|---|---|---|---|---|---|")
    for cid, c in claims.items():
        s = c.get("sensitivity")
        if not s:
            continue
        chosen = []
        for a in c["arms"]:
            sw = a.get("lr_sweep")
            if sw:
                edge = "" if sw.get("interior", True) else " (edge)"
                chosen.append(f"{a['name']}: {sw['shared_lr']:g} → {sw['chosen_lr']:g}{edge}")
        changed = (c["verdict"], c["condition"]) != (s["verdict"], s["condition"])
        mark = " **(changed)**" if changed else ""
        print(f"| {cid} | {verdict_text(c['verdict'], c['condition'])}{mark} | {key(c['key_number'])} | "
              f"{verdict_text(s['verdict'], s['condition'])} | {key(s.get('key_number'))} | {'; '.join(chosen)} |")


def verdicts(ledger, claims):
    print("| ID | verdict | key number | marginal |")
    print("|---|---|---|---|")
    for cid, c in claims.items():
        r = c.get("robustness") or {}
        print(f"| {cid} | {verdict_text(c['verdict'], c['condition'], 90)} | {key(c['key_number'])} | "
              f"{'yes' if r.get('flips') else 'no'} |")


def compare(ledger, claims, old_table):
    old = {}
    for line in Path(old_table).read_text().splitlines():
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] in claims:
            old[cells[0]] = (cells[2], cells[3])
    print("| ID | before | after | key number after |")
    print("|---|---|---|---|")
    for cid, c in claims.items():
        before = old.get(cid, ("–", "–"))[0]
        print(f"| {cid} | {verdict_text(before, '', 70)} | {verdict_text(c['verdict'], c['condition'])} | {key(c['key_number'])} |")


def main(argv):
    if len(argv) < 2 or argv[1] not in ("rates", "verdicts", "compare") or (argv[1] == "compare") != (len(argv) == 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ledger, claims = load(argv[0])
    if argv[1] == "rates":
        rates(ledger, claims)
    elif argv[1] == "verdicts":
        verdicts(ledger, claims)
    else:
        compare(ledger, claims, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
