#!/usr/bin/env bash
# scalelab check from the command line (docs/ledger.md):
#   (a) a quick run of a few claims writes ledger.json, claims/<ID>.json (valid against the claim
#       record schema, tests/ledger/ledger_schema.py) and summary.md;
#   (b) an identical second run takes every run from the cache and writes the same claims (except
#       the "seconds" fields);
#   (c) a truncated cache entry is reported as corrupt on stderr, re-run, and the check succeeds;
#   (d) bad input: one "scalelab: error:" line on stderr, a non-zero exit, nothing foreign touched;
#   (e) --jobs 1 and --jobs 2 give the same verdicts and measurements;
#   (f) check --help names its options.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/check_test_common.sh" check-cli

# run NAME OUTDIR ARGS...: scalelab check ARGS --out OUTDIR, stdout/stderr to $tmp/NAME.{out,err};
# fails the test (and prints stderr) on a non-zero exit.
run() {
  local name="$1" out="$2"
  shift 2
  if "$bin" check "$@" --out "$out" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
    ok "$name: check $* exited 0"
    return 0
  fi
  fail "$name: check $* exited non-zero"
  sed 's/^/    /' "$tmp/$name.err" | tail -20
  return 1
}

# runs_line NAME: "R C" from stdout's "R run(s) (C from the cache)".
runs_line() {
  sed -nE 's/.* ([0-9]+) run\(s\) \(([0-9]+) from the cache\).*/\1 \2/p' "$tmp/$1.out" | head -1
}

# ---------------------------------------------------------------------------------------------
# (a) a quick run of four claims
ids="E1,E2,A5,A13"
a="$tmp/a"
if run a1 "$a" --quick --only "$ids" --no-report; then
  if errs=$(python3 "$schema" validate "$a" --mode quick --ids "$ids" --exact-ids); then
    ok "a: ledger.json lists exactly $ids; every claims/<ID>.json validates; summary.md has a row per ID"
  else
    fail "a: schema"; printf '%s\n' "$errs" | sed 's/^/    /' | head -40
  fi
  [ -f "$a/.scalelab-ledger" ] && ok "a: marker written" || fail "a: no .scalelab-ledger marker"
  [ ! -e "$a/report.html" ] && ok "a: --no-report writes no report.html" || fail "a: report.html written despite --no-report"

  # (b) the same run again: everything from the cache, the same claims
  mkdir -p "$tmp/a-first" && cp -r "$a/claims" "$tmp/a-first/claims"
  if run a2 "$a" --quick --only "$ids" --no-report; then
    read -r total cached _ <<<"$(runs_line a2) x x"
    if [ "$total" = "$cached" ] && [ "$total" != x ]; then ok "b: $total run(s), $cached from the cache"
    else fail "b: second run: '$(head -1 "$tmp/a2.out")' (not all from the cache)"; fi
    grep -qE "\(${total:-x} cached\)" "$tmp/a2.err" && ok "b: progress says ($total cached)" ||
      fail "b: stderr lacks '($total cached)': $(head -1 "$tmp/a2.err")"
    if errs=$(python3 "$schema" same "$tmp/a-first" "$a"); then ok "b: claims/*.json identical except seconds"
    else fail "b: claims differ"; printf '%s\n' "$errs" | sed 's/^/    /'; fi
  fi
fi

# ---------------------------------------------------------------------------------------------
# (e) --jobs 1 vs --jobs 2 on claims with runs (E8 trains 24 quick runs); (b) and (c) again on
# these, since E1, E2, A5 and A13 are computed inline and have no cache entries.
j1="$tmp/jobs1"
j2="$tmp/jobs2"
if run e1 "$j1" --quick --only A5,E8 --no-report --jobs 1 && run e2 "$j2" --quick --only A5,E8 --no-report --jobs 2; then
  if errs=$(python3 "$schema" same "$j1" "$j2"); then ok "e: --jobs 1 and --jobs 2 give identical claims (verdicts, measurements; seconds aside)"
  else fail "e: --jobs 1 vs 2 differ"; printf '%s\n' "$errs" | sed 's/^/    /'; fi
  if [ "$(python3 "$schema" verdicts "$j1")" = "$(python3 "$schema" verdicts "$j2")" ]; then ok "e: same verdicts"
  else fail "e: verdicts differ"; fi
  if errs=$(python3 "$schema" validate "$j1" --mode quick --ids A5,E8 --exact-ids); then ok "e: schema"
  else fail "e: schema"; printf '%s\n' "$errs" | sed 's/^/    /' | head -40; fi
  read -r total cached _ <<<"$(runs_line e1) x x"
  [ "$cached" = 0 ] && [ "$total" -gt 0 ] && ok "e: first run: $total run(s), none cached" ||
    fail "e: first run: '$(head -1 "$tmp/e1.out")'"

  # (b) with runs: all from the cache, identical claims
  mkdir -p "$tmp/j1-first" && cp -r "$j1/claims" "$tmp/j1-first/claims"
  if run b2 "$j1" --quick --only A5,E8 --no-report --jobs 1; then
    read -r total2 cached2 _ <<<"$(runs_line b2) x x"
    [ "$total2" = "$total" ] && [ "$cached2" = "$total" ] && ok "b: second run: $total2 run(s), $cached2 from the cache" ||
      fail "b: second run: '$(head -1 "$tmp/b2.out")' (expected $total from the cache)"
    grep -qE "\($total cached\)" "$tmp/b2.err" && ok "b: progress says ($total cached)" ||
      fail "b: stderr lacks '($total cached)'"
    if grep -q '^\[check\] .*: run [0-9]* of' "$tmp/b2.err"; then fail "b: a run was executed again"; fi
    if errs=$(python3 "$schema" same "$tmp/j1-first" "$j1"); then ok "b: claims/*.json identical except seconds"
    else fail "b: claims differ"; printf '%s\n' "$errs" | sed 's/^/    /'; fi
  fi

  # (c) truncate one cache entry: reported corrupt, re-run, success, same claims
  # sed reads the whole list: head would leave sort writing to a closed pipe (SIGPIPE, which
  # pipefail and set -e turned into an abrupt exit of this test)
  victim=$(find "$j1/cache" -name '*.json' | sort | sed -n 1p)
  if [ -z "$victim" ]; then
    fail "c: no cache entry to corrupt in $j1/cache"
  else
    truncate -s 20 "$victim"
    if run c1 "$j1" --quick --only A5,E8 --no-report --jobs 1; then
      grep -q "cache entry .*$(basename "$victim").* is corrupt" "$tmp/c1.err" &&
        ok "c: stderr: $(grep 'is corrupt' "$tmp/c1.err" | head -1)" || fail "c: stderr does not report $(basename "$victim") corrupt"
      read -r total3 cached3 _ <<<"$(runs_line c1) x x"
      [ "$cached3" = $((total - 1)) ] && ok "c: $total3 run(s), $cached3 from the cache (one re-run)" ||
        fail "c: '$(head -1 "$tmp/c1.out")' (expected $((total - 1)) from the cache)"
      python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["key"] and j["result"]' "$victim" 2>/dev/null &&
        ok "c: the entry was rewritten" || fail "c: the corrupt entry was not rewritten"
      if errs=$(python3 "$schema" same "$tmp/j1-first" "$j1"); then ok "c: claims unchanged after the re-run"
      else fail "c: claims changed after re-running the corrupt entry"; printf '%s\n' "$errs" | sed 's/^/    /'; fi
    fi
  fi
fi

# ---------------------------------------------------------------------------------------------
# (d) bad input: exactly one "scalelab: error:" line on stderr and a non-zero exit.
# expect_error NAME PATTERN ARGS...
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  local status=0
  # Refused input fails at once; 20 s means it was accepted and the ledger started running.
  timeout 20 "$bin" check "$@" >"$tmp/err.out" 2>"$tmp/err.err" || status=$?
  local lines
  lines=$(grep -c . "$tmp/err.err" || true)
  if [ "$status" -eq 0 ]; then
    fail "d $name: exit status 0"
  elif [ "$status" -eq 124 ]; then
    fail "d $name: still running after 20 s: the input was accepted and the ledger started: $(head -1 "$tmp/err.err")"
  elif [ "$lines" -ne 1 ]; then
    fail "d $name: expected one line on stderr, got $lines:"; head -5 "$tmp/err.err" | sed 's/^/    /'
  elif ! grep -q '^scalelab: error: ' "$tmp/err.err"; then
    fail "d $name: stderr does not start with 'scalelab: error:': $(cat "$tmp/err.err")"
  elif ! grep -q -- "$pattern" "$tmp/err.err"; then
    fail "d $name: '$(cat "$tmp/err.err")' does not mention '$pattern'"
  else
    ok "d $name: $(cat "$tmp/err.err")"
  fi
}

expect_error "unknown ID" "E99" --quick --only E99 --no-report --out "$tmp/d-e99"
# An explicitly empty --only must be refused like --only " , " (parse_claim_ids: "names no claim"),
# not read as "all claims".
expect_error "empty --only" "--only" --quick --only "" --no-report --out "$tmp/d-empty"
expect_error "negative --jobs" "jobs" --quick --only E1 --no-report --jobs -1 --out "$tmp/d-jobs"
expect_error "--seeds 2" "seeds" --quick --only E1 --no-report --seeds 2 --out "$tmp/d-seeds"
for d in d-e99 d-jobs d-seeds; do
  [ ! -e "$tmp/$d" ] && ok "d: nothing written for $d" || fail "d: $tmp/$d was created although the input was refused"
done

foreign="$tmp/d-foreign"
mkdir -p "$foreign"
printf 'my notes, not a ledger\n' >"$foreign/notes.txt"
before=$(sha256sum "$foreign/notes.txt")
expect_error "--out with a foreign file" "$foreign" --quick --only E1 --no-report --out "$foreign"
[ "$(sha256sum "$foreign/notes.txt")" = "$before" ] && ok "d: the foreign file is unchanged" || fail "d: the foreign file changed"
[ "$(ls -A "$foreign")" = "notes.txt" ] && ok "d: nothing added beside it" || fail "d: $foreign now holds: $(ls -A "$foreign" | tr '\n' ' ')"

regular="$tmp/d-regular"
printf 'a regular file\n' >"$regular"
before=$(sha256sum "$regular")
expect_error "--out is a regular file" "not a directory" --quick --only E1 --no-report --out "$regular"
[ -f "$regular" ] && [ "$(sha256sum "$regular")" = "$before" ] && ok "d: the regular file is unchanged" || fail "d: the regular file changed"

# ---------------------------------------------------------------------------------------------
# (f) --help
if help=$("$bin" check --help 2>&1); then
  for opt in --quick --only --out --jobs --seeds; do
    grep -q -- "$opt" <<<"$help" && ok "f: --help mentions $opt" || fail "f: --help does not mention $opt"
  done
else
  fail "f: check --help exited non-zero"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
