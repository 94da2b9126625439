#!/usr/bin/env bash
# scalelab probe end to end on a tiny model: the table, probes.jsonl (one valid record per line,
# stable fields) and summary.json; histograms on request; one-line errors for bad options; an
# existing output is never overwritten.
set -u
bin="${SCALELAB_BIN:?}"
tmp="${SCALELAB_TMP:-/tmp}/probe-cli-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat > "$tmp/tiny.toml" <<'TOML'
[model]
d_model = 16
n_heads = 2
d_ff = 32
encoder_layers = 2
decoder_layers = 1
[data]
task = "copy"
train_size = 50
valid_size = 20
[train]
batch_size = 8
threads = 1
TOML

out=$("$bin" probe -c "$tmp/tiny.toml" --seeds 3 --batches 2 --out "$tmp/p" --logit-bins=-6,6,12 \
      --entropy-bins 5 --tag run=tiny 2>&1) || fail "probe exited non-zero: $out"
for want in "3 seed(s)" "Attention per layer" "encoder  1      self_attn" "decoder  0      cross_attn" \
            "Gradients per layer" "output_logits" "wrote"; do
  printf '%s' "$out" | grep -qF -- "$want" || fail "table lacks '$want'"
done
[ -s "$tmp/p/probes.jsonl" ] && [ -s "$tmp/p/summary.json" ] || fail "output files missing"

python3 - "$tmp/p" <<'PY' || failures=$((failures + 1))
import json, math, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(d + "/probes.jsonl")]
keys = {"schema", "probe", "stack", "layer", "site", "head", "seed", "step", "values"}
bad = [r for r in recs if not keys <= r.keys() or r["schema"] != 1]
assert not bad, f"records without the stable fields: {bad[:1]}"
probes = {r["probe"] for r in recs}
want = {"attn_qk", "attn_logits_raw", "attn_logits", "attn_softmax", "attn_kernel", "residual",
        "sublayer", "embed", "activation", "grad", "grad_layer", "loss"}
assert want <= probes, f"missing probes {want - probes}"
assert {r["seed"] for r in recs} == {1, 2, 3}
assert all(r["tags"] == {"run": "tiny"} for r in recs)
heads = {r["head"] for r in recs if r["probe"] == "attn_softmax"}
assert heads == {-1, 0, 1}, heads
for r in recs:
    if r["probe"] == "attn_logits":
        h = r["histograms"]["values"]
        assert len(h["counts"]) == 12 and len(h["edges"]) == 13
        assert sum(h["counts"]) + h["below"] + h["above"] + h["nan"] == r["values"]["count"]
    if r["probe"] == "attn_softmax":
        assert 0 <= r["values"]["entropy_norm_mean"] <= 1
        assert len(r["histograms"]["entropy_norm"]["counts"]) == 5
    if r["probe"] == "grad" and r["site"].endswith("weight"):
        assert r["values"]["update_ratio"] > 0
s = json.load(open(d + "/summary.json"))
g = [x for x in s["groups"] if x["probe"] == "attn_logits" and x["field"] == "var"]
assert len(g) == 2 + 2, len(g)  # 2 encoder self, 1 decoder self + 1 cross
assert all(len(x["values"]) == 3 and x["min"] <= x["median"] <= x["max"] for x in g)
assert s["probe"]["seeds"] == 3 and s["config"]["model"]["d_model"] == 16
print("ok   probes.jsonl:", len(recs), "records")
PY

# Never overwrite: the second run fails before any work and leaves the files as they were.
before=$(md5sum "$tmp/p/probes.jsonl")
err=$("$bin" probe -c "$tmp/tiny.toml" --seeds 1 --out "$tmp/p" 2>&1 >/dev/null)
[ $? -ne 0 ] && printf '%s' "$err" | grep -q "exists" || fail "overwrite not refused: $err"
[ "$before" = "$(md5sum "$tmp/p/probes.jsonl")" ] || fail "probes.jsonl changed"

# expect_error NAME PATTERN ARGS...: non-zero exit and one line on stderr containing PATTERN.
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  local err status lines
  err=$("$bin" probe -c "$tmp/tiny.toml" "$@" 2>&1 >/dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$status" -eq 0 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -qF -- "$pattern"; then
    fail "$name: status $status, stderr: $err"
  else
    echo "ok   $name: $err"
  fi
}
expect_error zero-seeds "--seeds 0: must be in 1..1000" --seeds 0
expect_error zero-batches "--batches 0" --batches 0
expect_error bad-split "allowed values: valid, test, train" --split dev
expect_error bad-bins "--logit-bins 1,2: expected lo,hi,n" --logit-bins 1,2
expect_error empty-bins "need lo < hi" --logit-bins=3,-3,10
expect_error bad-tag "--tag x: expected key=value" --tag x
expect_error bad-threshold "--saturated 1.5" --saturated 1.5
expect_error unknown-key "unknown key model.d_modle" --set model.d_modle=3
expect_error unknown-preset "vaswani2071" --preset vaswani2071

# Presets and --set reach the probed model: with the scale "none", Var(logit) = Var(q·k).
"$bin" probe -c "$tmp/tiny.toml" --preset vaswani2017 --set model.d_model=16 --set model.n_heads=2 \
  --set model.d_ff=32 --set model.attention.scale=none --seeds 1 --batches 1 --out "$tmp/none" >/dev/null \
  || fail "probe with a preset"
python3 - "$tmp/none" <<'PY' || failures=$((failures + 1))
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/probes.jsonl")]
raw = {(r["stack"], r["layer"], r["site"], r["head"]): r["values"]["var"] for r in recs if r["probe"] == "attn_logits_raw"}
for r in recs:
    if r["probe"] == "attn_logits":
        k = (r["stack"], r["layer"], r["site"], r["head"])
        assert abs(r["values"]["var"] - raw[k]) <= 1e-5 * raw[k], (k, r["values"]["var"], raw[k])
print("ok   scale none: logits = q.k")
PY

[ "$failures" -eq 0 ] && echo "all probe CLI checks passed"
exit "$failures"
