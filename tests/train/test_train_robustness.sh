#!/usr/bin/env bash
# scalelab train under misuse and failure: a resume that would corrupt a run is refused before
# anything is written; writes are checked and atomic; SIGINT/SIGTERM stop after the step in
# progress with a checkpoint; a run that failed early leaves a reusable directory; resume trims
# metrics.jsonl; a divergence never reaches a checkpoint.
set -u
bin="${SCALELAB_BIN:?}"
src="${SCALELAB_SOURCE:?}"
tmp="${SCALELAB_TMP:-/tmp}/train-robustness-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# expect_error NAME PATTERN COMMAND...: non-zero exit, exactly one line on stderr containing PATTERN.
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  local err status lines
  err=$("$@" 2>&1 >/dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$status" -eq 0 ]; then fail "$name: exit status 0"
  elif [ "$lines" -ne 1 ]; then fail "$name: expected one line on stderr, got $lines: $err"
  elif ! printf '%s' "$err" | grep -q -- "$pattern"; then fail "$name: '$err' does not contain '$pattern'"
  else ok "$name: $err"
  fi
}
sums() { (cd "$1" && md5sum config.toml config.json metrics.jsonl checkpoint.safetensors 2>/dev/null); }
train_steps() { grep '"split":"train"' "$1/metrics.jsonl" | sed 's/.*"step":\([0-9]*\).*/\1/' | tr '\n' ' '; }
losses() { grep '"split":"train"' "$1" | sed 's/.*"loss":\([^,]*\),.*/\1/'; }

common=(-c "$src/configs/copy.toml" --set model.d_model=32 --set train.threads=2
        --set train.eval_examples=20 --set data.train_size=2000 --set data.valid_size=100
        --set train.log_every=1 --set train.schedule=constant --set train.lr=1e-3)

# 1. Resume with train.steps at or below the checkpoint's step: refused, nothing changed.
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r1" --set train.steps=30 > /dev/null || fail "r1: 30 steps"
cp "$tmp/r1/metrics.jsonl" "$tmp/straight.jsonl"  # the reference loss sequence of 30 steps
before=$(sums "$tmp/r1")
expect_error resume-below "checkpoint is at step 30, beyond train.steps = 20" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r1" --set train.steps=20 --resume
expect_error resume-equal "already at step 30 = train.steps: nothing to do" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r1" --set train.steps=30 --resume
[ "$(sums "$tmp/r1")" = "$before" ] || fail "a refused resume changed the run directory"

# 2. A failed resume writes nothing (config.toml/config.json kept their d_model).
expect_error resume-other-model "model config differs" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r1" --set train.steps=40 --set model.d_model=64 --resume
[ "$(sums "$tmp/r1")" = "$before" ] || fail "a failed resume changed the run directory"
grep -q '^d_model = 32' "$tmp/r1/config.toml" || fail "config.toml: $(grep d_model "$tmp/r1/config.toml")"

# 3. Checked, atomic writes: a device is never written over; a write that fails (file size limit)
#    is one error naming the file, keeps the previous checkpoint and leaves no temporary file.
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/ids.npy', np.array([[1, 4, 5, 2]], dtype=np.int32))"
# First through a symlink to /dev/full: a binary that renames over its target (the bug) then
# replaces only the link, never the machine's /dev/full; the device itself only once that passed.
ln -s /dev/full "$tmp/full"
for out in "$tmp/full" /dev/full; do
  [ "$out" = /dev/full ] && [ "$failures" -gt 0 ] && { fail "/dev/full not tried: the symlink case failed"; break; }
  # The symlink is refused as one (apps/scalelab/output_file.hpp), the device as a non-regular file.
  why="exists and is not a regular file"
  [ "$out" = /dev/full ] || why="is a symbolic link"
  expect_error "logits $out" "--out '$out': $why" \
    "$bin" logits --checkpoint "$tmp/r1/checkpoint.safetensors" --source "$tmp/ids.npy" --input "$tmp/ids.npy" --out "$out" --force
  expect_error "gradients $out" "--out '$out': $why" \
    "$bin" gradients --checkpoint "$tmp/r1/checkpoint.safetensors" --source "$tmp/ids.npy" --input "$tmp/ids.npy" --target "$tmp/ids.npy" --out "$out" --force
  expect_error "init $out" "--out '$out': $why" \
    "$bin" init "${common[@]}" --out "$out" --force
done
[ -c /dev/full ] || fail "/dev/full is no longer a device"
"$bin" logits --checkpoint "$tmp/r1/checkpoint.safetensors" --source "$tmp/ids.npy" --input "$tmp/ids.npy" --out "$tmp/logits.npy" > /dev/null &&
  /usr/bin/python3 -c "import numpy as np; a = np.load('$tmp/logits.npy'); assert a.shape == (1, 4, 14), a.shape" ||
  fail "logits .npy unreadable"
# Files up to 4 KiB (SIGXFSZ ignored, so write() fails with EFBIG): metrics.jsonl outgrows it.
expect_error metrics-write-fails "cannot write $tmp/r3/metrics.jsonl" \
  bash -c 'trap "" XFSZ; ulimit -f 4; exec "$@"' _ "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r3" --set train.steps=60
# Files up to 100 KiB: the checkpoint (about 1 MB) cannot be written; the old one survives.
before=$(md5sum < "$tmp/r1/checkpoint.safetensors")
expect_error checkpoint-write-fails "cannot write $tmp/r1/checkpoint.safetensors" \
  bash -c 'trap "" XFSZ; ulimit -f 100; exec "$@"' _ "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r1" \
  --set train.steps=32 --set train.log_every=10 --resume
[ "$(md5sum < "$tmp/r1/checkpoint.safetensors")" = "$before" ] || fail "failed write replaced the checkpoint"
leftover=$(ls -A "$tmp/r1" | grep -v -x -e config.toml -e config.json -e metrics.jsonl -e checkpoint.safetensors -e summary.json)
[ -z "$leftover" ] || fail "temporary files left: $leftover"

# 4. Signals: the first SIGINT/SIGTERM finishes the step, writes the checkpoint, exits 128 + signal;
#    --resume continues from that step.
set -m  # background jobs of a script ignore SIGINT without job control
for sig in INT TERM; do
  d="$tmp/sig-$sig"
  # One stderr file per signal, absent until this run opens it: a file left by the previous
  # signal's run already holds 'step' lines, and polling it sent SIGTERM before this run had
  # installed its handler (the default action killed it: exit 143, no stop line, no checkpoint).
  sig_err="$tmp/sig-$sig.err"
  rm -f "$sig_err"
  "$bin" train "${common[@]}" --set train.run_dir="$d" --set train.steps=100000 > /dev/null 2> "$sig_err" &
  pid=$!
  for _ in $(seq 600); do grep -q '^step ' "$sig_err" 2>/dev/null && break; sleep 0.1; done
  kill -"$sig" "$pid"
  wait "$pid"
  status=$?
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  [ "$status" -eq "$want" ] || fail "SIG$sig: exit status $status, expected $want"
  grep -q "SIG$sig: stopped after step" "$sig_err" || fail "SIG$sig: no stop line: $(tail -2 "$sig_err")"
  [ -f "$d/checkpoint.safetensors" ] || fail "SIG$sig: no checkpoint"
  step=$(sed -n 's/.*stopped after step \([0-9]*\) .*/\1/p' "$sig_err")
  [ "$(train_steps "$d" | awk '{print $NF}')" = "$step" ] || fail "SIG$sig: last record is not step $step"
  "$bin" train "${common[@]}" --set train.run_dir="$d" --set train.steps=$((step + 3)) --resume \
    > /dev/null 2> "$tmp/resume.err" || fail "SIG$sig: resume failed: $(cat "$tmp/resume.err")"
  grep -q "resuming from step $step)" "$tmp/resume.err" || fail "SIG$sig: $(head -1 "$tmp/resume.err")"
  [ "$(train_steps "$d")" = "$(seq -s ' ' 1 $((step + 3))) " ] || fail "SIG$sig: steps $(train_steps "$d")"
  ok "SIG$sig: stopped after step $step with exit status $status, resumed to $((step + 3))"
done
set +m

# 5. A run that fails before its first checkpoint: --resume says why not, a fresh start reuses it.
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r5" --set train.steps=30 --set train.lr=1e300 \
  > /dev/null 2>&1 && fail "r5: lr = 1e300 trained"
[ -f "$tmp/r5/metrics.jsonl" ] && [ ! -e "$tmp/r5/checkpoint.safetensors" ] || fail "r5: $(ls "$tmp/r5")"
expect_error resume-without-checkpoint "no checkpoint.safetensors to resume from" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r5" --set train.steps=30 --resume
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r5" --set train.steps=30 > /dev/null ||
  fail "r5: a fresh start in a directory without checkpoint was refused"
[ "$(train_steps "$tmp/r5")" = "$(seq -s ' ' 1 30) " ] || fail "r5: steps $(train_steps "$tmp/r5")"
diff <(losses "$tmp/straight.jsonl") <(losses "$tmp/r5/metrics.jsonl") > /dev/null || fail "r5: losses differ from r1's"
expect_error reuse-with-checkpoint "already holds a run" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r5" --set train.steps=30

# 6. Resume trims metrics.jsonl to the checkpoint's step: the run went on to step 25 after its last
#    checkpoint (step 20) and died mid-record; resumed to 30 it equals a straight 30-step run.
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r6" --set train.steps=20 > /dev/null || fail "r6: 20 steps"
cp "$tmp/r6/checkpoint.safetensors" "$tmp/step20.safetensors"
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r6" --set train.steps=25 --resume > /dev/null || fail "r6: to 25"
cp "$tmp/step20.safetensors" "$tmp/r6/checkpoint.safetensors"
printf '{"split":"train","st' >> "$tmp/r6/metrics.jsonl"
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r6" --set train.steps=30 --resume > /dev/null || fail "r6: to 30"
[ "$(train_steps "$tmp/r6")" = "$(seq -s ' ' 1 30) " ] || fail "r6: steps $(train_steps "$tmp/r6")"
[ "$(grep -c '"split":"valid"' "$tmp/r6/metrics.jsonl")" -eq 2 ] || fail "r6: valid records $(grep '"valid"' "$tmp/r6/metrics.jsonl")"
diff <(losses "$tmp/straight.jsonl") <(losses "$tmp/r6/metrics.jsonl") > /dev/null || fail "r6: losses differ from the straight run"
ok "resume trims metrics.jsonl: $(wc -l < "$tmp/r6/metrics.jsonl") records"

# 7. Non-finite weights (lr = 1e300 is finite, so the config accepts it; the f32 update is inf): an
#    error naming the tensor and the step, advice that fits the config, and
#    never a checkpoint holding them.
expect_error diverge-clip-on "training diverged at step 1: .* after the update; no checkpoint was written (lower train.lr (now 1e+300); train.clip_norm = 1 is already on)" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r7" --set train.steps=30 --set train.lr=1e300 --set train.checkpoint_every=1
[ ! -e "$tmp/r7/checkpoint.safetensors" ] || fail "r7: a non-finite checkpoint was written"
expect_error diverge-clip-off "or enable train.clip_norm)" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r7b" --set train.steps=30 --set train.lr=1e300 --set train.clip_norm=0
"$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r7c" --set train.steps=5 > /dev/null || fail "r7c: 5 steps"
before=$(md5sum < "$tmp/r7c/checkpoint.safetensors")
expect_error diverge-keeps-checkpoint "training diverged at step 6: .*checkpoint.safetensors keeps step 5" \
  "$bin" train "${common[@]}" -q --set train.run_dir="$tmp/r7c" --set train.steps=10 --set train.lr=1e300 --set train.checkpoint_every=1 --resume
[ "$(md5sum < "$tmp/r7c/checkpoint.safetensors")" = "$before" ] || fail "r7c: the good checkpoint was replaced"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "train robustness: all checks passed"
