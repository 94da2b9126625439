#!/usr/bin/env bash
# The ledger over MPI: `mpirun -np 2 scalelab check --quick` hands the runs out as a work queue and
# rank 0 writes the ledger; on claims with runs (E8: 24 quick training runs; A5: computed inline)
# it gives the same claims (verdicts and measurements, timings aside) as one process, validates,
# and a second 2-rank run takes everything from rank 0's cache.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/mpi_common.sh" mpi-check
schema="$src/tests/ledger/ledger_schema.py"
ids=A5,E8
"$bin" check --quick --only "$ids" --no-report --out "$tmp/one" >"$tmp/one.out" 2>"$tmp/one.err" \
  || { fail "1-process check failed"; tail "$tmp/one.err"; }
mpi 2 check --quick --only "$ids" --no-report --out "$tmp/two" >"$tmp/two.out" 2>"$tmp/two.err" \
  || { fail "2-rank check failed"; tail "$tmp/two.err"; }
if errs=$(python3 "$schema" same "$tmp/one" "$tmp/two"); then
  ok "2 ranks and 1 process give identical claims (verdicts, measurements; seconds aside)"
else
  fail "claims differ"; printf '%s\n' "$errs" | sed 's/^/    /' | head -20
fi
v1=$(python3 "$schema" verdicts "$tmp/one")
v2=$(python3 "$schema" verdicts "$tmp/two")
[ -n "$v1" ] && [ "$v1" = "$v2" ] && ok "same verdicts: $(echo $v2)" || fail "verdicts: '$v1' vs '$v2'"
if errs=$(python3 "$schema" validate "$tmp/two" --mode quick --ids "$ids" --exact-ids); then ok "schema"
else fail "schema"; printf '%s\n' "$errs" | head -20; fi
grep -q "2 MPI ranks" "$tmp/two.err" && ok "progress names the ranks: $(head -1 "$tmp/two.err")" \
  || fail "progress: $(head -1 "$tmp/two.err")"
[ "$(grep -c '^scalelab check:' "$tmp/two.out")" = 1 ] && ok "rank 0 alone prints the result" \
  || fail "stdout: $(cat "$tmp/two.out")"
mpi 2 check --quick --only "$ids" --no-report --out "$tmp/two" >"$tmp/again.out" 2>"$tmp/again.err" \
  || fail "second 2-rank check failed"
read -r total cached _ <<<"$(sed -nE 's/.* ([0-9]+) run\(s\) \(([0-9]+) from the cache\).*/\1 \2/p' "$tmp/again.out") x x"
[ "$total" = "$cached" ] && [ "$total" -gt 0 ] 2>/dev/null && ok "again: $total run(s), all from the cache" \
  || fail "again: $(head -1 "$tmp/again.out")"
finish
