#!/usr/bin/env bash
# Opens the report in headless Chromium: it loads without any request leaving the file, every claim
# of ledger.json has its section in the DOM, every inline SVG is well-formed XML with plotted data,
# the opening quotes the ledger's numbers (and a number edited in a claim's JSON after a rerun), and
# at 420 px the page fits its window, the summary table's box stays inside the page (the table
# scrolls in it, no verdict wraps past 4 lines) and every plot's text is at least 10 px. Uses
# `scalelab check --quick` when the binary has it, else the fixture ledger. Skips (exit 0) only
# when Chromium is not installed.
set -u
bin="${SCALELAB_BIN:?}"
source_dir="${SCALELAB_SOURCE:?}"
tmp="${SCALELAB_TMP:-/tmp}/report-browser-$$"
chromium_bin="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium_bin" ]; then
  echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"
  exit 0
fi
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

ledger="$tmp/ledger"
# `scalelab check --help` would print the top-level help if check did not exist: read the list.
if "$bin" --help 2>/dev/null | grep -qE '^ +check +'; then
  echo "running: scalelab check --quick --out $ledger"
  "$bin" check --quick --out "$ledger" >"$tmp/check.log" 2>&1 || { cat "$tmp/check.log"; fail "scalelab check --quick"; exit 1; }
else
  echo "scalelab has no check subcommand yet: using the fixture ledger"
  cp -r "$source_dir/tests/report/fixtures/ledger" "$ledger"
fi
"$bin" report "$ledger" || { fail "scalelab report"; exit 1; }
[ -s "$ledger/report.html" ] && [ -s "$ledger/report.md" ] || { fail "report.html or report.md missing"; exit 1; }

# chrome RUN_NAME ARGS...: a fresh profile per run; the resolver maps every host to nothing, so even
# Chromium's own background traffic cannot leave the machine (it is still logged, and told apart).
chrome() {
  local name="$1"
  shift
  timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$tmp/profile-$name" --hide-scrollbars "$@" \
    2>"$tmp/chrome-$name.log"
}

page="file://$ledger/report.html"
chrome dom --log-net-log="$tmp/netlog.json" --dump-dom "$page" >"$tmp/dom.html" || fail "chromium --dump-dom"
chrome wide --screenshot="$tmp/wide.png" --window-size=1400,2000 "$page" || fail "chromium screenshot 1400"
chrome narrow --screenshot="$tmp/narrow.png" --window-size=420,2000 "$page" || fail "chromium screenshot 420"
for png in wide narrow; do
  [ -s "$tmp/$png.png" ] || fail "no $png screenshot"
done
# A copy with a script measures the page at 420 px (report.html has none). Headless Chromium makes
# no window narrower than 500 px, so the copy is shown in a 420-pixel iframe (srcdoc: same origin,
# its media queries see 420 px) and reports to the outer page: the page's width; the summary
# table's box, its table and the most lines a verdict cell's text takes; each plot's smallest text
# (computed font size times the SVG's scale; folded evidence is opened first so every plot is laid out).
cat >"$tmp/measure.js" <<'JS'
(function () {
  const out = {page: [document.documentElement.scrollWidth, window.innerWidth]};
  const box = document.getElementById("summary-table");
  if (box) {
    const r = box.getBoundingClientRect(), table = box.querySelector("table");
    let lines = 0, worst = "";
    for (const row of box.querySelectorAll("tbody tr")) {
      // The cell's text, not the cell: a row is as tall as its longest cell.
      const cell = row.children[2], range = document.createRange();
      range.selectNodeContents(cell);
      const n = range.getBoundingClientRect().height / parseFloat(getComputedStyle(cell).lineHeight);
      if (n > lines) { lines = n; worst = row.children[0].textContent; }
    }
    out.summary = {left: r.left, right: r.right, page: document.documentElement.clientWidth,
                   scroll: box.scrollWidth, client: box.clientWidth, overflow: getComputedStyle(box).overflowX,
                   table: table.getBoundingClientRect().width, verdict_lines: lines, worst_verdict: worst};
  }
  for (const d of document.querySelectorAll("details")) d.open = true;
  out.plots = [];
  for (const svg of document.querySelectorAll("figure svg")) {
    const scale = svg.clientWidth / svg.viewBox.baseVal.width;
    let min = null, texts = 0;
    for (const t of svg.querySelectorAll("text")) {
      if (!t.textContent.trim()) continue;
      texts += 1;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (min === null || px < min) min = px;
    }
    out.plots.push({id: svg.closest("figure").id, texts: texts, min_px: min});
  }
  parent.document.body.setAttribute("data-measure", JSON.stringify(out));
})();
JS
python3 - "$ledger/report.html" "$tmp/measure.js" "$ledger/measure.html" <<'PY'
import html, sys
page = open(sys.argv[1], encoding="utf-8").read()
script = open(sys.argv[2], encoding="utf-8").read()
inner = page.replace("</body>", "<script>" + script + "</script></body>")
with open(sys.argv[3], "w", encoding="utf-8") as f:
    f.write('<!DOCTYPE html><html><body style="margin:0"><iframe width="420" height="900" style="border:0" srcdoc="'
            + html.escape(inner, quote=True) + '"></iframe></body></html>')
PY
chrome measure --window-size=600,900 --dump-dom "file://$ledger/measure.html" >"$tmp/measure.html" || fail "chromium measure"

check_page() {  # check_page DOM_FILE [EXPECTED_NUMBER]
  python3 - "$ledger" "$1" "$tmp/netlog.json" "$tmp/measure.html" "${2:-}" <<'PY'
import html, json, os, re, sys
import xml.etree.ElementTree as ET

ledger_dir, dom_path, netlog_path, measure_path, expected = sys.argv[1:6]
source = open(os.path.join(ledger_dir, "report.html"), encoding="utf-8").read()
dom = open(dom_path, encoding="utf-8").read()
problems = []

# 1. Nothing outside the file: every src/href is an in-page anchor; no stylesheet links, imports
#    or remote url(); and no request started by the page in Chromium's network log.
for attr, target in re.findall(r'\b(src|href)\s*=\s*["\']([^"\']*)["\']', source):
    if not target.startswith("#"):
        problems.append(f"{attr}={target!r} points outside the page")
for pattern in (r"<link\b", r"@import", r"url\(\s*['\"]?(?!#)", r"<script\b", r"<iframe\b", r"<img\b"):
    if re.search(pattern, source, re.I):
        problems.append(f"report.html contains {pattern}")
if netlog_path and os.path.exists(netlog_path):
    text = open(netlog_path, encoding="utf-8").read().rstrip()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short when Chromium exits: close it
        log = json.loads(text.rstrip(",") + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    for e in log.get("events", []):
        p = e.get("params", {})
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in p:
            # Chromium's own traffic (updates, accounts) has no origin; the page's would.
            if p.get("initiator") != "not an origin" and not p["url"].startswith(("file:", "data:")):
                problems.append(f"the page requested {p['url']}")

# 2. A section per claim of ledger.json.
ledger = json.load(open(os.path.join(ledger_dir, "ledger.json"), encoding="utf-8"))
ids = [c["id"] for c in ledger["claims"]]
for cid in ids:
    if f'id="claim-{cid}"' not in dom:
        problems.append(f"no section for claim {cid} in the DOM")

# 3. Every inline SVG is well-formed XML and holds a plotted path with several points.
svgs = re.findall(r"<svg\b.*?</svg>", source, re.S)
def finite(v):
    return isinstance(v, (int, float)) and v == v and abs(v) != float("inf")
drawable = 0  # plot specs with at least one measured value (an all-null plot is reported, not drawn)
for cid in ids:
    for plot in json.load(open(os.path.join(ledger_dir, "claims", f"{cid}.json")))["plots"]:
        points = [p for s in plot.get("series", []) for p in s.get("points", [])]
        if any(finite(p[0]) and finite(p[1]) for p in points) or \
           any(finite(v) for row in plot.get("matrix", []) for v in row):
            drawable += 1
# The questions' figures (ids "plot-answer-...") come on top of the claims' own.
answers = len(re.findall(r'<figure id="plot-answer-[^"]*">\s*<svg', source))
if "No plots: " not in source and len(svgs) - answers != drawable:
    problems.append(f"{len(svgs) - answers} inline SVGs in claim sections for {drawable} plot specs with data")
for reason in re.findall(r"was not drawn: ([^<]*)", source):
    if "No plots: " not in source and not reason.startswith("no value to plot"):
        problems.append(f"a plot was not drawn: {html.unescape(reason)}")
pair = re.compile(r"-?\d+(?:\.\d+)?[ ,]-?\d+(?:\.\d+)?")
for i, svg in enumerate(svgs):
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        problems.append(f"inline SVG {i} is not well-formed XML: {e}")
        continue
    best = 0
    for el in root.iter():
        tag = el.tag.split("}")[-1]
        if tag == "path":
            best = max(best, len(pair.findall(el.get("d", ""))))
        elif tag in ("polyline", "polygon"):
            best = max(best, len(pair.findall(el.get("points", ""))))
    data_groups = [el for el in root.iter() if "gnuplot_plot" in (el.get("id") or "")]
    if not data_groups:
        problems.append(f"inline SVG {i} has no plotted data group")
    if best < 4:
        problems.append(f"inline SVG {i}: longest path has {best} points")

# 4. The opening (before the summary table) quotes the key numbers of the claims it links to.
opening_html = dom[: dom.find('id="summary"')]
# The comparison with the full run links the claims it lists, not claims the answers quote.
opening_html = re.sub(r'<h2 id="compared">.*?(?=<h2)', "", opening_html, flags=re.S)
opening_text = html.unescape(re.sub(r"<[^>]+>", "", opening_html))
linked = sorted(set(re.findall(r'href="#claim-([A-Za-z0-9]+)"', opening_html)))
if not linked:
    problems.append("the opening links to no claim")
for cid in linked:
    claim = json.load(open(os.path.join(ledger_dir, "claims", f"{cid}.json"), encoding="utf-8"))
    key = claim.get("key_number") or {}
    if claim["verdict"] == "not testable here" or not (key.get("text") or key.get("value") is not None):
        continue
    if key.get("text") and key["text"] not in opening_text:
        problems.append(f"the opening does not quote {cid}'s key number {key['text']!r}")
if expected and expected not in opening_text:
    problems.append(f"the opening does not show the edited number {expected}")

# 5. At 420 px: no horizontal scrolling of the page (wide tables scroll inside their own box); the
#    summary table's box inside the page, scrolling when its table is wider, no verdict past ~4
#    lines; every plot's text at least 10 px.
if measure_path and os.path.exists(measure_path):
    m = re.search(r'<body[^>]*data-measure="([^"]*)"', open(measure_path, encoding="utf-8").read())
    if not m:
        problems.append("could not measure the page at 420 px")
    else:
        measured = json.loads(html.unescape(m.group(1)))
        width, window = measured["page"]
        if window != 420:
            problems.append(f"measured in a {window} px window, not 420 px")
        if width > window:
            problems.append(f"the page is {width} px wide in a {window} px window")
        s = measured.get("summary")
        if not s:
            problems.append("no summary table (#summary-table) in the page")
        else:
            if s["left"] < 0 or s["right"] > s["page"] + 0.5:
                problems.append(f"the summary table's box spans {s['left']:.0f}-{s['right']:.0f} px of a {s['page']} px page")
            if s["table"] > s["client"] + 0.5 and s["overflow"] not in ("auto", "scroll"):
                problems.append(f"the summary table ({s['table']:.0f} px) is cut off in its {s['client']} px box (overflow-x {s['overflow']})")
            if s["scroll"] + 0.5 < s["table"]:
                problems.append(f"the summary table ({s['table']:.0f} px) cannot be scrolled to its end ({s['scroll']} px)")
            if s["verdict_lines"] > 4.5:
                problems.append(f"{s['worst_verdict']}'s verdict takes {s['verdict_lines']:.1f} lines at 420 px")
        plots = measured["plots"]
        if len(plots) != len(svgs):
            problems.append(f"measured {len(plots)} plots of {len(svgs)} inline SVGs")
        for p in plots:
            if not p["texts"]:
                problems.append(f"plot {p['id']} has no text to measure")
            elif p["min_px"] < 10:
                problems.append(f"plot {p['id']}: text {p['min_px']:.1f} px at 420 px (at least 10)")
        sizes = [p["min_px"] for p in plots if p["texts"]]
        if sizes:
            print(f"at 420 px: summary verdicts at most {s['verdict_lines']:.1f} lines; smallest plot text "
                  f"{min(sizes):.1f} px over {len(sizes)} plots" if s else "")

for p in problems:
    print("  " + p)
print(f"checked {len(ids)} claims, {len(svgs)} inline SVGs, opening links {', '.join(linked)}")
sys.exit(1 if problems else 0)
PY
}

check_page "$tmp/dom.html" && echo "ok   page loads offline, sections, SVGs, opening numbers, narrow width" || fail "page checks"

# Edit one key number the opening quotes, rerun the report, find the new number in the page.
edited=$(python3 - "$ledger" <<'PY'
import json, os, re, sys
d = sys.argv[1]
html = open(os.path.join(d, "report.html"), encoding="utf-8").read()
opening = html[: html.find('id="summary"')]
for cid in re.findall(r'href="#claim-([A-Za-z0-9]+)"', opening):
    path = os.path.join(d, "claims", f"{cid}.json")
    claim = json.load(open(path, encoding="utf-8"))
    if claim["verdict"] != "not testable here" and claim.get("key_number"):
        claim["key_number"]["value"] = 987.625
        claim["key_number"]["text"] = "987.625"
        json.dump(claim, open(path, "w", encoding="utf-8"), indent=2)
        print(cid)
        break
PY
)
if [ -z "$edited" ]; then
  fail "no claim in the opening with a key number to edit"
else
  "$bin" report "$ledger" >/dev/null || fail "scalelab report after the edit"
  chrome dom2 --dump-dom "$page" >"$tmp/dom2.html" || fail "chromium --dump-dom after the edit"
  python3 - "$tmp/dom2.html" <<'PY' && echo "ok   edited key number of $edited shows in the opening" || fail "edited number of $edited not in the opening"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
opening = html.unescape(re.sub(r"<[^>]+>", "", dom[: dom.find('id="summary"')]))
sys.exit(0 if "987.625" in opening else 1)
PY
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all browser checks passed"
