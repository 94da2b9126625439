#!/usr/bin/env bash
# Publish the full ledger's report under docs/report/ (the answers a newcomer reads first).
#
#   scripts/publish-report.sh [--jobs N]      run `scalelab check` (full mode) into runs/, then publish
#   scripts/publish-report.sh --from DIR      publish a finished full-mode ledger directory
#   ... --commit REV                          the commit the ledger ran at (default: HEAD)
#
# docs/report/ receives report.html, report.md, their plots, ledger.json, summary.md and
# claims/<ID>.json, and PUBLISHED.md: the date, the commit, the CPU (`scalelab info`), the
# command, the runs and the time the ledger took. The new files are assembled beside it and
# swapped in at the end, so an error leaves the published report as it was.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$here/build/scalelab"
dest="$here/docs/report"
from="" jobs=0 commit=HEAD
usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --from) [ $# -ge 2 ] || { echo "publish-report: --from needs a directory" >&2; exit 2; }; from="$2"; shift 2 ;;
    --jobs) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || { echo "publish-report: --jobs needs a whole number, got '${2:-}'" >&2; exit 2; }
            jobs="$2"; shift 2 ;;
    --commit) [ $# -ge 2 ] || { echo "publish-report: --commit needs a revision" >&2; exit 2; }; commit="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "publish-report: unknown argument '$1' (allowed: --from DIR, --jobs N, --commit REV, --help)" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "publish-report: $bin is not built (run scripts/setup.sh)" >&2; exit 1; }
commit_id=$(git -C "$here" rev-parse --short --verify --quiet "$commit^{commit}") ||
  { echo "publish-report: --commit '$commit' is not a commit of this repository" >&2; exit 2; }

command_line="scalelab check --jobs $jobs --out DIR"
if [ -z "$from" ]; then
  from="$here/runs/check-full-$(date +%Y%m%d-%H%M%S)"
  "$bin" check --jobs "$jobs" --out "$from"
fi
ledger="$from/ledger.json"
[ -f "$ledger" ] || { echo "publish-report: '$from' holds no ledger.json (a finished scalelab check directory is needed)" >&2; exit 1; }
mode=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("mode", ""))' "$ledger")
[ "$mode" = full ] || { echo "publish-report: '$from' is a $mode-mode ledger; only a full run is published" >&2; exit 1; }
for f in report.html report.md summary.md; do
  [ -f "$from/$f" ] || { echo "publish-report: '$from' has no $f (run: scalelab report '$from')" >&2; exit 1; }
done

new="$dest.new.$$"
rm -rf "$new" && mkdir -p "$new/claims"
trap 'rm -rf "$new"' EXIT
cp "$from/report.html" "$from/report.md" "$from/summary.md" "$ledger" "$new/"
cp "$from"/claims/*.json "$new/claims/"
[ -d "$from/plots" ] && cp -r "$from/plots" "$new/plots"
python3 - "$ledger" "$new/PUBLISHED.md" "$command_line" "$commit_id" \
  "$("$bin" info)" <<'PY'
import json, sys, datetime
ledger, out, command, commit, info = sys.argv[1:6]
l = json.load(open(ledger))
m, s = divmod(int(round(l["seconds"])), 60)
h, m = divmod(m, 60)
took = (f"{h} h " if h else "") + f"{m} min {s} s"
with open(out, "w") as f:
    f.write("# The published ledger\n\n")
    f.write(f"Published {datetime.date.today().isoformat()} from commit {commit}, scalelab {l['version'].split('+')[0]}.\n\n")
    command = command.replace("--jobs 0", f"--jobs {l['jobs']}")  # the jobs the ledger ran with
    f.write(f"- Command: `{command}` ({l['mode']} mode, {l['train_seeds']} training seeds, "
            f"{l['init_seeds']} init-time seeds, {l['jobs']} job(s), {l['ranks']} rank(s))\n")
    f.write(f"- Runs: {l['runs']} ({l['cached_runs']} from the cache); the ledger took {took}"
            f"{' (all from the cache: the time of the first run is in docs/ledger.md, Budgets)' if l['runs'] and l['runs'] == l['cached_runs'] else ''}\n")
    f.write(f"- CPU: {l['cpu']}\n\n`scalelab info` on the machine that ran it:\n\n```\n{info}\n```\n\n")
    f.write("Open `report.html` in a browser; `report.md` is the same report in Markdown.\n")
PY
rm -rf "$dest.old"
[ -d "$dest" ] && mv "$dest" "$dest.old"
mv "$new" "$dest"
rm -rf "$dest.old"
trap - EXIT
echo "published $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["claims"]))' "$dest/ledger.json") claims to $dest"
