#!/usr/bin/env bash
# End to end: the copy task is learned to 100 % exact match by greedy decoding within a fixed
# budget; the same seed and thread count give the identical loss sequence; a resumed run continues
# exactly as an uninterrupted one.
set -u
bin="${SCALELAB_BIN:?}"
src="${SCALELAB_SOURCE:?}"
tmp="${SCALELAB_TMP:-/tmp}/copy-task-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
losses() { grep '"split":"train"' "$1/metrics.jsonl" | sed 's/.*"loss":\([^,]*\),.*/\1/'; }

# 1. Learn the copy task (budget: 600 steps of 64 strings, one layer each side).
"$bin" train -c "$src/configs/copy.toml" --set train.run_dir="$tmp/learn" \
  --set model.encoder_layers=1 --set model.decoder_layers=1 --set train.steps=600 \
  --set train.eval_every=0 --set train.eval_examples=200 --set data.train_size=5000 \
  --set data.valid_size=200 --set train.threads=2 -q > "$tmp/learn.out" || fail "training failed"
cat "$tmp/learn.out"
grep -q '"valid_exact_match": 1.0' "$tmp/learn/summary.json" || fail "exact match below 100 %: $(cat "$tmp/learn/summary.json")"

# 2. Determinism: two identical short runs, identical loss sequences (every step logged).
for r in a b; do
  "$bin" train -c "$src/configs/copy.toml" --set train.run_dir="$tmp/det-$r" --set train.steps=40 \
    --set train.log_every=1 --set train.eval_examples=0 --set data.train_size=2000 \
    --set model.dropout=0.1 --set train.threads=2 -q > /dev/null || fail "run $r failed"
done
[ "$(losses "$tmp/det-a" | wc -l)" -eq 40 ] || fail "expected 40 logged steps"
diff <(losses "$tmp/det-a") <(losses "$tmp/det-b") > /dev/null || fail "same seed, different losses"

# 3. Resume: 20 steps + resume to 40 equals 40 straight (constant schedule: the rate does not
#    depend on the total).
common=(-c "$src/configs/copy.toml" --set train.log_every=1 --set train.eval_examples=0
        --set data.train_size=2000 --set model.dropout=0.1 --set train.schedule=constant
        --set train.lr=1e-3 --set train.threads=2 -q)
"$bin" train "${common[@]}" --set train.run_dir="$tmp/straight" --set train.steps=40 > /dev/null || fail "straight run"
"$bin" train "${common[@]}" --set train.run_dir="$tmp/resumed" --set train.steps=20 > /dev/null || fail "first half"
"$bin" train "${common[@]}" --set train.run_dir="$tmp/resumed" --set train.steps=40 --resume > /dev/null || fail "resume"
diff <(losses "$tmp/straight") <(losses "$tmp/resumed") > /dev/null || fail "resumed run differs from the straight run"

# 4. Snapshots and averaging: snapshot_every keeps the weights of steps 10, 20, 30; the last one
#    equals the final checkpoint's weights; scalelab average of the three is usable by eval and
#    is their element-wise mean.
"$bin" train "${common[@]}" --set train.run_dir="$tmp/snap" --set train.steps=30 \
  --set train.snapshot_every=10 > /dev/null || fail "snapshot run"
[ "$(ls "$tmp/snap/snapshots")" = "$(printf 'step10.safetensors\nstep20.safetensors\nstep30.safetensors')" ] ||
  fail "snapshots: $(ls "$tmp/snap/snapshots" | tr '\n' ' ')"
rm "$tmp/snap/metrics.jsonl"
mv "$tmp/snap/checkpoint.safetensors" "$tmp/final.safetensors"
err=$("$bin" train "${common[@]}" --set train.run_dir="$tmp/snap" --set train.steps=30 2>&1 >/dev/null) &&
  fail "a run directory holding snapshots was reused"
grep -q "already holds a run" <<< "$err" || fail "reuse of a run directory with snapshots: $err"
"$bin" average "$tmp"/snap/snapshots/step{10,20,30}.safetensors --out "$tmp/avg.safetensors" > /dev/null ||
  fail "average"
"$bin" eval --checkpoint "$tmp/avg.safetensors" > /dev/null || fail "eval of the averaged checkpoint"
/usr/bin/python3 - "$tmp" "$src" <<'PY' || fail "snapshot or average weights"
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[2] + "/tests/oracle")
from checkpoint_numpy import doc_reader  # the numpy reader of docs/checkpoint.md
read = doc_reader(sys.argv[2])
d = sys.argv[1]
_, final = read(d + "/final.safetensors")
snaps = [read(f"{d}/snap/snapshots/step{s}.safetensors")[1] for s in (10, 20, 30)]
meta, avg = read(d + "/avg.safetensors")
assert set(avg) == set(snaps[2]) and not any(k.startswith("optimizer.") for k in avg), sorted(avg)[:5]
for k in avg:
    assert np.array_equal(snaps[2][k], final[k]), k  # the step-30 snapshot is the final weights
    mean = (snaps[0][k].astype(np.float64) + snaps[1][k] + snaps[2][k]) / 3
    assert np.allclose(avg[k], mean, rtol=1e-6, atol=1e-7), k
assert any(not np.array_equal(snaps[0][k], snaps[2][k]) for k in avg)  # they are not copies
assert meta["step"] == "30" and [s["step"] for s in json.loads(meta["averaged_from"])] == [10, 20, 30]
PY
echo "copy task learned; runs deterministic; resume exact; snapshots and averaging"
