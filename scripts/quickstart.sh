#!/usr/bin/env bash
# The main job: set up (Debian packages, Release build), then run the claims ledger in quick mode
# (`scalelab check --quick`, about a minute on 2 cores), print its summary table and say where the
# report is and how to run the full ledger.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
out="$here/runs/check-quick-$(date +%Y%m%d-%H%M%S)"
"$here/build/scalelab" info
"$here/build/scalelab" check --quick --out "$out"
echo
cat "$out/summary.md"
echo
echo "report: $out/report.html (open it in a browser); data: $out/ledger.json, $out/claims/<ID>.json"
echo "quick mode trains on the synthetic copy task: its verdicts are provisional. The full ledger's"
echo "answers are published in docs/report/report.md; to run it yourself (G2P on CMUdict, 964 runs,"
echo "112 minutes on 2 cores of an AMD EPYC Zen 3, docs/ledger.md Budgets):  build/scalelab check --out runs/check-full"
