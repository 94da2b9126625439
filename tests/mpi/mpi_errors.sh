#!/usr/bin/env bash
# Bad situations under mpirun -np 2 end the job with one scalelab error line (from rank 0) and a
# non-zero exit, with nothing written: a bad config, a run directory that holds a run, ranks given
# different configs, a command that does not use ranks.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/mpi_common.sh" mpi-errors
small=(--config "$src/configs/copy.toml" --set train.steps=4 --set data.train_size=200
       --set data.valid_size=16 --set train.eval_examples=8 --set train.threads=1 --quiet)

# expect NAME PATTERN ARGS...: `mpi 2 ARGS` exits non-zero with exactly one "scalelab: error:" line
# on stderr, containing PATTERN, and within 60 s (no rank left waiting).
expect() {
  local name="$1" pattern="$2"
  shift 2
  local status
  timeout 60 "$mpirun_bin" --oversubscribe --bind-to none "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
  local lines
  lines=$(grep -c '^scalelab: error:' "$tmp/err")
  if [ "$status" -eq 0 ] || [ "$status" -eq 124 ]; then
    fail "$name: exit status $status"; cat "$tmp/err"
  elif [ "$lines" -ne 1 ]; then
    fail "$name: $lines scalelab error lines:"; cat "$tmp/err"
  elif ! grep '^scalelab: error:' "$tmp/err" | grep -q -- "$pattern"; then
    fail "$name: $(grep '^scalelab: error:' "$tmp/err") lacks '$pattern'"
  else
    ok "$name (exit $status): $(grep '^scalelab: error:' "$tmp/err")"
  fi
}

expect "bad config value" "model.d_model" -np 2 "$bin" train "${small[@]}" --set model.d_model=-3 \
  --set train.run_dir="$tmp/bad"
[ ! -e "$tmp/bad" ] && ok "bad config: no run directory written" || fail "bad config wrote $tmp/bad"

"$bin" train "${small[@]}" --set train.run_dir="$tmp/done" >/dev/null 2>&1 || fail "setup run failed"
before=$(sha256sum "$tmp/done/checkpoint.safetensors")
expect "run directory holds a run" "already holds a run" -np 2 "$bin" train "${small[@]}" \
  --set train.run_dir="$tmp/done"
[ "$before" = "$(sha256sum "$tmp/done/checkpoint.safetensors")" ] && ok "its checkpoint is untouched" \
  || fail "the refused run changed the checkpoint"

expect "ranks with different configs" "ranks 0 and 1 disagree on the config" \
  -np 1 "$bin" train "${small[@]}" --set train.run_dir="$tmp/mm" : \
  -np 1 "$bin" train "${small[@]}" --set train.run_dir="$tmp/mm" --set train.lr=0.5
[ ! -e "$tmp/mm/checkpoint.safetensors" ] && ok "mismatch: no checkpoint written" || fail "mismatch wrote a checkpoint"

expect "a command without ranks" "only train and check use the ranks" -np 2 "$bin" info
finish
