#!/usr/bin/env bash
# bench/compare_train_step.py's --rounds: the per-row summary over rounds (median, range, rounds in
# which scalelab was ahead; a row whose peers all failed gives no ratio and is left out of that
# row's count), and its argument errors (one line naming the option and what is allowed, exit 1,
# before anything runs). No peers are run: the summary is computed from rows written here.
set -uo pipefail
src="${SCALELAB_SOURCE:?SCALELAB_SOURCE is not set}"
tmp=$(mktemp -d "${SCALELAB_TMP:-/tmp}/compare-rounds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

/usr/bin/python3 - "$src/bench/compare_train_step.py" <<'PY' || failures=$((failures + 1))
import importlib.util, math, sys
spec = importlib.util.spec_from_file_location("compare", sys.argv[1])
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)

def row(config, ratio):
    return {"config": config, "threads": 1, "precision": "f32",
            "engines": {"scalelab": {"ratio_to_fastest_peer": ratio}}}

rounds = [[row("small", 1.5), row("encoder_decoder", 0.9)],
          [row("small", 1.1), row("encoder_decoder", float("nan"))],
          [row("small", 0.8), row("encoder_decoder", 1.3)]]
s = compare.rounds_summary(rounds)
assert s[("small", 1, "f32")] == (1.1, 0.8, 1.5, 2, 3), s
assert s[("encoder_decoder", 1, "f32")] == (1.1, 0.9, 1.3, 1, 2), s  # nan left out
only_failed = compare.rounds_summary([[row("small", float("nan"))]])
assert only_failed == {}, only_failed
print("ok   rounds_summary: medians, ranges and rounds ahead; a failed row is left out")
PY

mkdir -p "$tmp/venv/bin" && touch "$tmp/venv/bin/python"
for case in "--rounds 0|--rounds 0 is not allowed: use a whole number >= 1" \
            "--repeats 0|--repeats 0 is not allowed: use a whole number >= 1"; do
  args="${case%%|*}" want="${case#*|}"
  # shellcheck disable=SC2086
  err=$(/usr/bin/python3 "$src/bench/compare_train_step.py" --build "$tmp" --venv "$tmp/venv" $args 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" = 1 ] && [ "$lines" = 1 ] && [[ "$err" == *"$want"* ]]; then
    echo "ok   $args: exit 1, one line: $err"
  else
    echo "FAIL $args: exit $rc, $lines line(s): $err"
    failures=$((failures + 1))
  fi
done
[ -z "$(ls -A "$tmp" | grep -v '^venv$')" ] || { echo "FAIL files left in $tmp"; failures=$((failures + 1)); }

if [ "$failures" = 0 ]; then echo "all checks passed"; else echo "$failures failure(s)"; exit 1; fi
