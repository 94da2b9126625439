#!/usr/bin/env bash
# scalelab report on a ledger directory made by someone else (docs/robustness.md, "Report
# surfaces"): labels that try command substitution in gnuplot run nothing and are drawn as text;
# arm names that try live Markdown stay text in report.md; a gnuplot that never returns is killed
# at the plot and report limits; SIGTERM while drawing kills gnuplot, removes its temporary
# directory and writes nothing (exit 143, one line).
set -u
bin="${SCALELAB_BIN:?}"
source_dir="${SCALELAB_SOURCE:?}"
tmp="${SCALELAB_TMP:-/tmp}/report-hostile-$$"
rm -rf "$tmp" && mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
lines() { grep -c . "$1"; }
snapshot() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# A ledger whose strings would run `touch $tmp/pwned-N` if they reached gnuplot or a shell
# unescaped, and open live Markdown if they reached report.md unescaped.
ledger="$tmp/ledger"
cp -r "$source_dir/tests/report/fixtures/ledger" "$ledger"
python3 - "$ledger" "$tmp" <<'PY' || { echo "FAIL setup"; exit 1; }
import json, sys
ledger, tmp = sys.argv[1], sys.argv[2]
def load(i): return json.load(open(f"{ledger}/claims/{i}.json"))
def save(i, j): json.dump(j, open(f"{ledger}/claims/{i}.json", "w"), indent=1)
def cmd(n): return f"`touch {tmp}/pwned-{n}` $(touch {tmp}/pwned-{n}b) '\" \\`touch {tmp}/pwned-{n}c`"
e4 = load("E4")
e4["plots"][0]["x_label"] = "d_model " + cmd(1)
e4["plots"][0]["y_label"] = "ratio\n!touch " + tmp + "/pwned-2\n" + cmd(2)
e4["plots"][0]["title"] = "title " + cmd(3)
e4["plots"][0]["series"][0]["label"] = 'series "; system("touch ' + tmp + '/pwned-4"); "' + cmd(4)
e4["arms"][0]["name"] = "arm\n\n[click](javascript:alert(1)) ![img](https://evil.example/x.png)\n\n<script>alert(1)</script>"
save("E4", e4)
a4 = load("A4")
a4["plots"][0]["cols"][0] = "col " + cmd(5)
save("A4", a4)
e6 = load("E6")
e6["plots"][0]["cols"][1] = "heat " + cmd(6)
e6["plots"][0]["rows"][0] = "row " + cmd(7)
save("E6", e6)
PY

# ---- finding 1: no command runs; finding 7: no live Markdown ----
if command -v gnuplot >/dev/null; then
  "$bin" report "$ledger" > "$tmp/out" 2> "$tmp/err"
  status=$?
  if [ "$status" -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q ": 4 claims, 3 plots$" "$tmp/out"; then
    echo "ok   hostile labels: exit 0, 3 plots drawn: $(cat "$tmp/out")"
  else
    fail "hostile labels: status $status, stdout: $(cat "$tmp/out"), stderr: $(cat "$tmp/err")"
  fi
  ran=$(find "$tmp" -maxdepth 1 -name 'pwned-*' | wc -l)
  [ "$ran" -eq 0 ] && echo "ok   hostile labels: no command ran (no pwned-* file)" || fail "a command from a label ran ($ran marker files)"
  grep -q 'd_model `touch ' "$ledger/plots/E4-ratio.svg" && echo "ok   the label is drawn as text" ||
    fail "the x label is not in the plot as text"
else
  echo "skip hostile labels through gnuplot: gnuplot is not installed"
  PATH=/nonexistent "$bin" report "$ledger" > /dev/null 2>&1 || fail "report of the hostile ledger without gnuplot"
fi
md="$ledger/report.md"
live=0
for pattern in '[click](' '](javascript:' '![img]' '<script' 'https://evil' '<img'; do
  if grep -qF -- "$pattern" "$md"; then fail "report.md holds live markup: $pattern"; live=1; fi
done
summary=$(grep -F '<details><summary>Resolved config of arm &#34;arm' "$md")
if [ "$live" -eq 0 ] && printf '%s' "$summary" | grep -qF '</summary>'; then
  echo "ok   report.md: no live markup; the arm name stays inside its <summary> line"
else
  fail "report.md: the <details> summary of the hostile arm: $summary"
fi
grep -qF '<script' "$ledger/report.html" && fail "report.html holds <script" || echo "ok   report.html: no <script"

# ---- finding 4: a gnuplot that never returns ----
cat > "$tmp/hang-gnuplot" <<EOF
#!/bin/sh
[ "\$1" = --version ] && { echo 'gnuplot 5.4 (hangs)'; exit 0; }
echo \$\$ >> '$tmp/hang-pids'
exec sleep 1000
EOF
chmod +x "$tmp/hang-gnuplot"
cp -r "$source_dir/tests/report/fixtures/ledger" "$tmp/slow"
start=$(date +%s)
"$bin" report "$tmp/slow" --gnuplot "$tmp/hang-gnuplot" --plot-timeout 1 --timeout 1.5 > "$tmp/out" 2> "$tmp/err"
status=$?
took=$(($(date +%s) - start))
if [ "$status" -eq 0 ] && [ "$took" -le 8 ] && grep -q "(3 not drawn); 3 hit the time limit" "$tmp/out"; then
  echo "ok   hanging gnuplot: stopped at the limits in ${took} s: $(cat "$tmp/out")"
else
  fail "hanging gnuplot: status $status after ${took} s: $(cat "$tmp/out") $(cat "$tmp/err")"
fi

# SIGTERM while drawing: exit 143, one line, nothing written, no gnuplot or temporary directory
# left. Twice: from timeout(1), which signals the child and then its whole process group (the same
# request delivered twice), and from two kills in a row once gnuplot runs.
check_sigterm() {  # $1: what; $2: directory; $3: status; $4: snapshot before
  local after left alive=0
  after=$(snapshot "$2")
  left=$(find "$2-tmp" -mindepth 1 | wc -l)
  while read -r pid; do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done < "$tmp/hang-pids"
  if [ "$3" -eq 143 ] && [ "$(lines "$tmp/err")" -eq 1 ] &&
    grep -q "^scalelab: SIGTERM: report stopped while drawing its plots; nothing was written" "$tmp/err" &&
    [ "$4" = "$after" ] && [ "$left" -eq 0 ] && [ "$alive" -eq 0 ] && [ -s "$tmp/hang-pids" ]; then
    echo "ok   $1: 143, $(cat "$tmp/err"); files unchanged, no temp dir, no gnuplot left"
  else
    fail "$1: status $3, stderr '$(cat "$tmp/err")', files changed: $([ "$4" = "$after" ] && echo no || echo yes), temp entries $left, live gnuplots $alive"
  fi
  while read -r pid; do [ -n "$pid" ] && kill "$pid" 2>/dev/null; done < "$tmp/hang-pids"  # only on failure
  : > "$tmp/hang-pids"
}
cp -r "$source_dir/tests/report/fixtures/ledger" "$tmp/sig"
mkdir -p "$tmp/sig-tmp"
before=$(snapshot "$tmp/sig")
: > "$tmp/hang-pids"
TMPDIR="$tmp/sig-tmp" timeout --preserve-status -s TERM 2 "$bin" report "$tmp/sig" --gnuplot "$tmp/hang-gnuplot" > /dev/null 2> "$tmp/err"
check_sigterm "SIGTERM from timeout while drawing" "$tmp/sig" $? "$before"

TMPDIR="$tmp/sig-tmp" "$bin" report "$tmp/sig" --gnuplot "$tmp/hang-gnuplot" > /dev/null 2> "$tmp/err" &
report_pid=$!
for _ in $(seq 100); do [ -s "$tmp/hang-pids" ] && break; sleep 0.1; done
kill -TERM "$report_pid"; kill -TERM "$report_pid"
wait "$report_pid"
check_sigterm "two SIGTERMs in a row while drawing" "$tmp/sig" $? "$before"


if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all hostile-ledger report checks passed"
