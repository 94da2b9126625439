#!/usr/bin/env bash
# scalelab check's output directory and cache (ledger/out_dir.hpp, ledger/earlier_claims.hpp,
# ledger/cache.hpp), from the command line:
#   (a) two checks on one --out: the second is refused with one line while the first runs, and
#       the first finishes with its claims;
#   (b) a --only run into a directory with earlier claims keeps them listed in ledger.json and
#       says so in one stderr line;
#   (c) a FIFO where check reads (ledger.json, claims/, cache/) is refused at once, never opened;
#   (d) a read-only --out (as an unprivileged user) is one clear line, not a raw filesystem error;
#   (e) a cache entry with a non-numeric loss is re-run with one warning line naming the file, and
#       the claims come out as before.
# Every refusal: exit 1, exactly one stderr line, the sha256 of every file unchanged.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/check_test_common.sh" check-out-dir

# Every file with its sha256, every directory and special file by name, sorted.
snapshot() {
  (cd "$1" && find . -mindepth 1 ! -type f -printf '%y %p\n' | sort && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# refused NAME DIR PATTERN COMMAND...: exit 1 within 20 s, one stderr line matching PATTERN,
# DIR unchanged.
refused() {
  local name="$1" dir="$2" pattern="$3"
  shift 3
  local before after status=0
  before=$(snapshot "$dir")
  timeout 20 "$@" >"$tmp/refused.out" 2>"$tmp/refused.err" </dev/null || status=$?
  after=$(snapshot "$dir")
  local lines
  lines=$(grep -c . "$tmp/refused.err")
  if [ "$status" -eq 124 ]; then fail "$name: still running after 20 s (blocked or accepted)"
  elif [ "$status" -ne 1 ]; then fail "$name: exit status $status, expected 1: $(cat "$tmp/refused.err")"
  elif [ "$lines" -ne 1 ]; then fail "$name: expected one stderr line, got $lines:"; sed 's/^/    /' "$tmp/refused.err" | head -5
  elif ! grep -qE -- "$pattern" "$tmp/refused.err"; then fail "$name: '$(cat "$tmp/refused.err")' does not match /$pattern/"
  elif [ "$before" != "$after" ]; then fail "$name: $dir changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"
  else ok "$name: $(cat "$tmp/refused.err")"
  fi
}

check_quick() { "$bin" check --quick --no-report --jobs 1 "$@"; }

# ---------------------------------------------------------------------------------------------
# (a) two checks on one directory. E8 trains 24 quick runs: long enough to be caught running.
shared="$tmp/shared"
# The binary itself in the background (not through check_quick: $! would be the subshell running
# the function, and SIGSTOP would pause that shell, not the check).
"$bin" check --quick --no-report --jobs 1 --only E8 --out "$shared" >"$tmp/first.out" 2>"$tmp/first.err" &
first=$!
for _ in $(seq 1 600); do
  grep -q '^\[check\] .*: run 1 of' "$tmp/first.err" 2>/dev/null && break
  kill -0 "$first" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$first" 2>/dev/null; then
  # The first is paused meanwhile (it keeps its lock), so that the snapshot compares what the
  # second one did alone.
  kill -STOP "$first"
  # SIGSTOP lands asynchronously: wait until every thread of the first is stopped (state T), else
  # a cache file it was creating can appear between the two snapshots.
  for _ in $(seq 1 200); do
    states=$(sed -E 's/^.*\) (.).*$/\1/' /proc/"$first"/task/*/stat 2>/dev/null | sort -u | tr -d '\n')
    [ "$states" = "T" ] && break
    sleep 0.05
  done
  refused "a: second check on the same --out" "$shared" "^scalelab: error: --out '.*shared': another scalelab check is writing this directory" \
    "$bin" check --quick --no-report --only E1 --out "$shared"
  kill -CONT "$first"
else
  fail "a: the first check ended before the second could be tried: $(tail -2 "$tmp/first.err")"
fi
if wait "$first"; then
  ok "a: the first check finished"
  python3 "$schema" validate "$shared" --mode quick --ids E8 --exact-ids >/dev/null && ok "a: its ledger lists E8 and validates" ||
    fail "a: the first check's ledger: $(python3 "$schema" validate "$shared" --mode quick --ids E8 --exact-ids)"
else
  fail "a: the first check failed: $(tail -3 "$tmp/first.err")"
fi

# ---------------------------------------------------------------------------------------------
# (b) --only E1, then --only E2 into the same directory: E1 stays listed, and this is said.
merge="$tmp/merge"
if check_quick --only E1 --out "$merge" >/dev/null 2>"$tmp/b1.err" && check_quick --only E2 --out "$merge" >"$tmp/b2.out" 2>"$tmp/b2.err"; then
  listed=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(",".join(c["id"] for c in j["claims"]), ",".join(j["earlier_claims"]))' "$merge/ledger.json")
  [ "$listed" = "E1,E2 E1" ] && ok "b: ledger.json lists E1,E2; earlier_claims E1" || fail "b: ledger.json lists '$listed'"
  lines=$(grep -c 'ledger.json also lists E1 from an earlier check' "$tmp/b2.err")
  [ "$lines" -eq 1 ] && ok "b: stderr: $(grep 'also lists' "$tmp/b2.err")" || fail "b: stderr does not say so once: $(cat "$tmp/b2.err")"
  grep -q '^  E1 .*\[earlier check\]' "$tmp/b2.out" && ok "b: stdout marks E1 as from an earlier check" || fail "b: stdout: $(cat "$tmp/b2.out")"
  grep -q '^| E1 |.*(earlier check) |' "$merge/summary.md" && ! grep -q '^| E2 |.*(earlier check)' "$merge/summary.md" &&
    ok "b: summary.md marks E1 (only) as from an earlier check" || fail "b: summary.md: $(grep '^| E' "$merge/summary.md")"
  python3 "$schema" validate "$merge" --mode quick --ids E1,E2 --exact-ids >/dev/null && ok "b: the merged ledger validates" ||
    fail "b: $(python3 "$schema" validate "$merge" --mode quick --ids E1,E2 --exact-ids)"
  if PATH=/nonexistent-path-for-gnuplot "$bin" report "$merge" >/dev/null 2>"$tmp/b3.err"; then ok "b: scalelab report reads the merged ledger"
  else fail "b: report: $(cat "$tmp/b3.err")"; fi
else
  fail "b: check --only E1 / E2: $(cat "$tmp/b1.err" "$tmp/b2.err" | tail -3)"
fi

# ---------------------------------------------------------------------------------------------
# (c) FIFOs where check reads: refused at once (a reader would block), never removed.
for where in ledger.json claims/E1.json cache/0123456789abcdef.json; do
  fifo_dir="$tmp/fifo-$(basename "$where")"
  mkdir -p "$fifo_dir/claims" "$fifo_dir/cache" && echo "written by scalelab check" >"$fifo_dir/.scalelab-ledger"
  mkfifo "$fifo_dir/$where"
  refused "c: FIFO $where" "$fifo_dir" "^scalelab: error: --out '.*': '$where' is a FIFO, not a file scalelab check writes" \
    "$bin" check --quick --no-report --only E1 --out "$fifo_dir"
done

# ---------------------------------------------------------------------------------------------
# (d) a directory the user cannot write (root writes anywhere: run as nobody).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  readonly_dir="$tmp/readonly"
  mkdir -p "$readonly_dir" && chmod 755 "$readonly_dir" "$tmp"
  refused "d: read-only --out" "$readonly_dir" "^scalelab: error: --out '.*readonly': not writable \(Permission denied\)$" \
    "${as_user[@]}" "$bin" check --quick --no-report --only E1 --out "$readonly_dir"
  refused "d: --out in a read-only directory" "$readonly_dir" "^scalelab: error: --out '.*readonly/new': cannot create the directory '.*readonly/new' \(Permission denied\)$" \
    "${as_user[@]}" "$bin" check --quick --no-report --only E1 --out "$readonly_dir/new"
elif [ "$(id -u)" -ne 0 ]; then
  readonly_dir="$tmp/readonly"
  mkdir -p "$readonly_dir" && chmod 555 "$readonly_dir"
  refused "d: read-only --out" "$readonly_dir" "^scalelab: error: --out '.*readonly': not writable \(Permission denied\)$" \
    "$bin" check --quick --no-report --only E1 --out "$readonly_dir"
  chmod 755 "$readonly_dir"
else
  echo "skip d: running as root without setpriv"
fi

# ---------------------------------------------------------------------------------------------
# (e) a cached result with a non-numeric loss is re-run, not trusted (E8's runs, cached by (a)).
cached="$shared"
if [ -f "$cached/ledger.json" ]; then
  mkdir -p "$tmp/cached-first" && cp -r "$cached/claims" "$tmp/cached-first/"
  victim=$(grep -l '"curve":\[\[' "$cached"/cache/*.json | sort | sed -n 1p)  # not head: SIGPIPE under pipefail
  if [ -z "$victim" ]; then
    fail "e: no cached training run in $cached/cache"
  else
    python3 - "$victim" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["result"]["curve"][0][1] = "abc"
open(sys.argv[1], "w").write(json.dumps(j))
PY
    if check_quick --only E8 --out "$cached" >"$tmp/e2.out" 2>"$tmp/e2.err"; then
      warnings=$(grep -c 'cache entry' "$tmp/e2.err")
      if [ "$warnings" -eq 1 ] && grep -q "cache entry '.*$(basename "$victim")' is corrupt (result of a train run: curve\[0\]\[1\] = '\"abc\"': expected a number or null); running it again" "$tmp/e2.err"; then
        ok "e: $(grep 'cache entry' "$tmp/e2.err")"
      else
        fail "e: expected one warning naming $(basename "$victim"): $(cat "$tmp/e2.err")"
      fi
      grep -q '^\[check\] .*: run 1 of 1 this round,' "$tmp/e2.err" && ok "e: exactly that run was done again" ||
        fail "e: not exactly one run re-done: $(grep '^scalelab check:' "$tmp/e2.err")"
      grep -q 'json.exception' "$tmp/e2.err" && fail "e: a raw library message reached stderr" || ok "e: no raw library message"
      python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert isinstance(j["result"]["curve"][0][1], (int, float))' "$victim" &&
        ok "e: the entry was rewritten with a number" || fail "e: the entry was not rewritten"
      if errs=$(python3 "$schema" same "$tmp/cached-first" "$cached"); then ok "e: claims as before the corruption"
      else fail "e: claims changed: $errs"; fi
    else
      fail "e: the check failed on the corrupt entry: $(tail -3 "$tmp/e2.err")"
    fi
  fi
else
  fail "e: no ledger from (a) to corrupt"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
