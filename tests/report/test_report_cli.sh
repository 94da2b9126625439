#!/usr/bin/env bash
# scalelab report on the command line: --help names its options, a directory without ledger.json is
# one clear error line with a non-zero exit, so is a --gnuplot that does not exist and a
# --compare-with that holds no full-mode ledger (in report, and in check before its run); no
# gnuplot in PATH still gives a page with its tables.
set -u
bin="${SCALELAB_BIN:?}"
source_dir="${SCALELAB_SOURCE:?}"
tmp="${SCALELAB_TMP:-/tmp}/report-cli-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"$bin" report --help | grep -q -- "--gnuplot" && echo "ok   --help lists --gnuplot" || fail "--help lacks --gnuplot"

mkdir -p "$tmp/empty"
err=$("$bin" report "$tmp/empty" 2>&1 >/dev/null)
status=$?
if [ "$status" -ne 0 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] && printf '%s' "$err" | grep -q "no ledger.json"; then
  echo "ok   no ledger.json: $err"
else
  fail "no ledger.json: status $status, stderr: $err"
fi
[ ! -e "$tmp/empty/report.html" ] || fail "a report was written for a directory without a ledger"

cp -r "$source_dir/tests/report/fixtures/ledger" "$tmp/ledger"
# A gnuplot asked for by name must work: one line, non-zero exit, no report written.
err=$("$bin" report "$tmp/ledger" --gnuplot "$tmp/no-such-gnuplot" 2>&1 >/dev/null)
status=$?
if [ "$status" -ne 0 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] && printf '%s' "$err" | grep -q "no-such-gnuplot': no such file"; then
  echo "ok   --gnuplot missing: $err"
else
  fail "--gnuplot missing: status $status, stderr: $err"
fi
[ ! -e "$tmp/ledger/report.html" ] || fail "a report was written with a --gnuplot that does not exist"
# No gnuplot in PATH (and none asked for): the page says so and keeps its tables.
out=$(PATH=/nonexistent "$bin" report "$tmp/ledger" 2>&1) || fail "report without gnuplot in PATH exited non-zero: $out"
grep -q "No plots: " "$tmp/ledger/report.html" && grep -q "<table>" "$tmp/ledger/report.html" &&
  echo "ok   without gnuplot: the page says so and keeps its tables" || fail "without gnuplot: page lacks the notice or tables"
printf '%s' "$out" | grep -q "gnuplot not found" && echo "ok   without gnuplot: stdout says so" || fail "stdout: $out"

# --compare-with: a directory without a full-mode ledger.json is one line, non-zero, nothing written.
"$bin" report --help | grep -q -- "--compare-with DIR|none" && echo "ok   report --help lists --compare-with" || fail "report --help lacks --compare-with"
"$bin" check --help | grep -q -- "--compare-with DIR|none" && echo "ok   check --help lists --compare-with" || fail "check --help lacks --compare-with"
cp -r "$source_dir/tests/report/fixtures/ledger" "$tmp/quick"
for bad in "$tmp/empty" "$tmp/ledger"; do  # no ledger.json; a quick-mode ledger
  err=$("$bin" report "$tmp/quick" --compare-with "$bad" 2>&1 >/dev/null)
  status=$?
  if [ "$status" -ne 0 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] && printf '%s' "$err" | grep -q "the full run to compare with: '$bad"; then
    echo "ok   report --compare-with $(basename "$bad"): $err"
  else
    fail "report --compare-with $bad: status $status, stderr: $err"
  fi
  [ ! -e "$tmp/quick/report.html" ] || fail "a report was written with --compare-with $bad"
done
start=$(date +%s)
err=$("$bin" check --quick --only E1 --out "$tmp/check-out" --compare-with "$tmp/empty" 2>&1 >/dev/null)
status=$?
if [ "$status" -ne 0 ] && printf '%s' "$err" | grep -q "no ledger.json" && [ ! -e "$tmp/check-out" ] && [ $(( $(date +%s) - start )) -lt 30 ]; then
  echo "ok   check --compare-with without a ledger fails before the run: $err"
else
  fail "check --compare-with $tmp/empty: status $status, out dir $(ls -d "$tmp/check-out" 2>/dev/null), stderr: $err"
fi
err=$("$bin" check --quick --only E1 --out "$tmp/check-out" --no-report --compare-with none 2>&1 >/dev/null)
[ $? -ne 0 ] && printf '%s' "$err" | grep -q "excludes" && [ ! -e "$tmp/check-out" ] &&
  echo "ok   check --compare-with with --no-report: $err" || fail "check --no-report --compare-with: $err"
PATH=/nonexistent "$bin" report "$tmp/quick" --compare-with "$source_dir/tests/report/fixtures/full-ledger" >/dev/null 2>&1 &&
  grep -q 'id="compared"' "$tmp/quick/report.html" && grep -q "abc1234" "$tmp/quick/report.html" &&
  echo "ok   report --compare-with a full ledger: the section is there" || fail "report --compare-with the full fixture"
PATH=/nonexistent "$bin" report "$tmp/quick" --compare-with none >/dev/null 2>&1 && ! grep -q 'id="compared"' "$tmp/quick/report.html" &&
  echo "ok   report --compare-with none: no section" || fail "report --compare-with none"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all report CLI checks passed"
