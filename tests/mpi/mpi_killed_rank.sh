#!/usr/bin/env bash
# A rank killed (SIGKILL) in the middle of a 2-rank training run: mpirun ends the job with a
# non-zero exit and says which rank died of which signal; the run directory keeps its last
# complete checkpoint (written atomically by rank 0: no half-written file), which a single process
# resumes from.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/mpi_common.sh" mpi-killed
run="$tmp/run"
"$mpirun_bin" --oversubscribe --bind-to none -np 2 "$bin" train --config "$src/configs/copy.toml" \
  --set train.steps=100000 --set train.checkpoint_every=5 --set train.log_every=5 \
  --set train.eval_every=0 --set data.train_size=2000 --set data.valid_size=32 \
  --set train.eval_examples=16 --set train.threads=1 --set train.run_dir="$run" \
  >"$tmp/out" 2>"$tmp/err" &
launcher=$!

# Rank 1: the child of mpirun whose environment says OMPI_COMM_WORLD_RANK=1.
rank1=""
for _ in $(seq 1 600); do
  if [ -z "$rank1" ]; then
    for pid in $(pgrep -P "$launcher"); do
      if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then rank1=$pid; fi
    done
  fi
  # Wait for a second checkpoint so the kill lands mid-run, between or during writes.
  if [ -n "$rank1" ] && [ -f "$run/metrics.jsonl" ] && [ "$(grep -c '"split":"train"' "$run/metrics.jsonl")" -ge 3 ]; then
    break
  fi
  sleep 0.1
done
if [ -z "$rank1" ]; then
  fail "did not find rank 1 among mpirun's children"
  kill "$launcher" 2>/dev/null
  finish
fi
kill -KILL "$rank1"
timeout 120 tail --pid="$launcher" -f /dev/null
wait "$launcher"
status=$?
if [ "$status" -ne 0 ]; then ok "mpirun exited $status"; else fail "mpirun exited 0 after a rank was killed"; fi
if grep -q "exited on signal 9" "$tmp/err"; then
  ok "stderr names the problem: $(grep -m1 'exited on signal 9' "$tmp/err" | sed 's/^ *//')"
else
  fail "stderr does not say a rank died of signal 9:"; cat "$tmp/err"
fi
# A write cut short leaves at most its temporary file (.checkpoint.safetensors.XXXXXX), never a
# partial checkpoint.safetensors: reported, not a failure.
leftovers=$(find "$run" -name '.*.??????' | tr '\n' ' ')
[ -z "$leftovers" ] && ok "no temporary file left in the run directory" || echo "note: temporary file(s) left: $leftovers"
step=$(python3 - "$run/checkpoint.safetensors" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
print(header["__metadata__"]["step"])
PY
) || step=""
if [ -n "$step" ] && [ "$step" -ge 5 ]; then
  ok "checkpoint.safetensors is whole (step $step)"
  if "$bin" train --config "$run/config.toml" --set train.steps=$((step + 5)) --resume --quiet \
       >"$tmp/resume.out" 2>"$tmp/resume.err"; then
    ok "a single process resumes from it: $(cat "$tmp/resume.out")"
  else
    fail "resume from the checkpoint failed: $(cat "$tmp/resume.err")"
  fi
else
  fail "no readable checkpoint after the kill"
fi
finish
