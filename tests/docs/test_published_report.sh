#!/usr/bin/env bash
# The published full report (docs/report/, scripts/publish-report.sh) answers the claims this
# binary has: exactly the built-in claims, each with the statement and criterion text that
# `scalelab check --list` prints, from a full-mode run, with its report pages and PUBLISHED.md.
# And docs/ledger.md's "Claims" section is that same --list output.
set -u
bin="${SCALELAB_BIN:?}"
src="${SCALELAB_SOURCE:?}"
pub="$src/docs/report"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

list=$("$bin" check --list) || { echo "FAIL scalelab check --list"; exit 1; }
listing="${SCALELAB_TMP:-/tmp}/published-report-list-$$.md"
printf '%s\n' "$list" > "$listing"
trap 'rm -f "$listing"' EXIT
for f in ledger.json report.html report.md summary.md PUBLISHED.md; do
  [ -s "$pub/$f" ] || fail "docs/report/$f is missing (scripts/publish-report.sh writes it)"
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }

if out=$(python3 - "$pub" "$listing" 2>&1 <<'PY'
import json, re, sys
pub = sys.argv[1]
listing = open(sys.argv[2]).read()
builtin = {}
for block in re.split(r"^### ", listing, flags=re.M)[1:]:
    cid = block.split("\n", 1)[0].strip()
    fields = dict(re.findall(r"^\*\*(Claim|Criterion)\.\*\* (.*)$", block, flags=re.M))
    builtin[cid] = fields
ledger = json.load(open(f"{pub}/ledger.json"))
errs = []
if ledger.get("mode") != "full":
    errs.append(f"ledger.json mode is {ledger.get('mode')!r}, not 'full'")
ids = [c["id"] for c in ledger["claims"]]
if sorted(ids) != sorted(builtin):
    errs.append(f"published ids {sorted(set(ids) ^ set(builtin))} differ from the built-in claims")
html = open(f"{pub}/report.html").read()
for cid in builtin:
    try:
        c = json.load(open(f"{pub}/claims/{cid}.json"))
    except OSError as e:
        errs.append(f"claims/{cid}.json: {e}")
        continue
    if c["criterion"] != builtin[cid].get("Criterion"):
        errs.append(f"{cid}: the published criterion differs from scalelab check --list's")
    if c["statement"] != builtin[cid].get("Claim"):
        errs.append(f"{cid}: the published statement differs from scalelab check --list's")
    if f'id="claim-{cid}"' not in html:
        errs.append(f"{cid}: report.html has no section with id {cid}")
print("\n".join(errs) if errs else f"{len(builtin)} claims, full mode, criteria and statements as --list prints them")
sys.exit(1 if errs else 0)
PY
); then ok "docs/report: $out"; else fail "docs/report: $out"; fi

# docs/ledger.md ends with the --list output (its "Claims" section).
if [ "$(sed -n '/^### E1$/,$p' "$src/docs/ledger.md")" = "$(printf '%s\n' "$list" | sed -n '/^### E1$/,$p')" ]; then
  ok "docs/ledger.md's Claims section is scalelab check --list's output"
else
  fail "docs/ledger.md's Claims section differs from scalelab check --list (regenerate it from the command)"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
