#!/usr/bin/env bash
# SIGINT or SIGTERM sent to one rank (rank 1, not rank 0) of a 2-rank training run: every rank
# stops after the same step, rank 0 names the signal that arrived (SIGINT, SIGTERM) in its one
# "scalelab:" line, the job exits 128 + that signal (130, 143) and the checkpoint of that step is
# whole.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/mpi_common.sh" mpi-signal

# signal_rank1 SIGNAL NAME STATUS
signal_rank1() {
  local sig="$1" name="$2" want="$3"
  local run="$tmp/run-$name"
  "$mpirun_bin" --oversubscribe --bind-to none -np 2 "$bin" train --config "$src/configs/copy.toml" \
    --set train.steps=100000 --set train.checkpoint_every=0 --set train.log_every=5 \
    --set train.eval_every=0 --set data.train_size=2000 --set data.valid_size=32 \
    --set train.eval_examples=16 --set train.threads=1 --set train.run_dir="$run" -q \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  local launcher=$! rank1="" pid
  for _ in $(seq 1 600); do
    if [ -z "$rank1" ]; then
      for pid in $(pgrep -P "$launcher"); do
        if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then rank1=$pid; fi
      done
    fi
    # Training has started (the first train record is written) before the signal.
    if [ -n "$rank1" ] && [ -f "$run/metrics.jsonl" ] && grep -q '"split":"train"' "$run/metrics.jsonl"; then break; fi
    sleep 0.1
  done
  if [ -z "$rank1" ]; then
    fail "$name: did not find rank 1 among mpirun's children"
    kill "$launcher" 2>/dev/null
    return
  fi
  kill "-$sig" "$rank1"
  timeout 120 tail --pid="$launcher" -f /dev/null
  wait "$launcher"
  local status=$?
  [ "$status" -eq "$want" ] && ok "$name to rank 1: the job exits $status" ||
    fail "$name to rank 1: the job exits $status, expected $want: $(head -3 "$tmp/$name.err")"
  local lines
  lines=$(grep -c '^scalelab: ' "$tmp/$name.err")
  if [ "$lines" -eq 1 ] && grep -q "^scalelab: $name: stopped after step [0-9]* of 100000 (sent to another rank), checkpoint written to" "$tmp/$name.err"; then
    ok "$name: rank 0 says: $(grep '^scalelab: ' "$tmp/$name.err")"
  else
    fail "$name: expected one 'scalelab: $name: stopped after step ...' line, got $lines:"; sed 's/^/    /' "$tmp/$name.err" | head -10
  fi
  local step
  step=$(grep '^scalelab: ' "$tmp/$name.err" | sed -nE 's/.*stopped after step ([0-9]+) .*/\1/p')
  if [ -n "$step" ] && "$bin" train --config "$run/config.toml" --set train.steps=$((step + 2)) --resume -q \
       >"$tmp/$name.resume.out" 2>"$tmp/$name.resume.err"; then
    ok "$name: a single process resumes from step $step"
  else
    fail "$name: cannot resume from the checkpoint: $(cat "$tmp/$name.resume.err")"
  fi
}

signal_rank1 INT SIGINT 130
signal_rank1 TERM SIGTERM 143
finish
