#!/usr/bin/env bash
# Bad input gets one clear line naming the problem and a non-zero exit; nothing is overwritten.
set -u
bin="${SCALELAB_BIN:?}"
tmp="${SCALELAB_TMP:-/tmp}/cli-errors-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect_error NAME PATTERN COMMAND...: the command must exit non-zero and print exactly one
# line on stderr that contains PATTERN.
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  local err
  err=$("$@" 2>&1 >/dev/null)
  local status=$?
  local lines
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$status" -eq 0 ]; then
    echo "FAIL $name: exit status 0"; failures=$((failures + 1))
  elif [ "$lines" -ne 1 ]; then
    echo "FAIL $name: expected one line on stderr, got $lines:"; printf '%s\n' "$err"; failures=$((failures + 1))
  elif ! printf '%s' "$err" | grep -q -- "$pattern"; then
    echo "FAIL $name: '$err' does not contain '$pattern'"; failures=$((failures + 1))
  else
    echo "ok   $name: $err"
  fi
}

cat > "$tmp/base.toml" <<'TOML'
[model]
d_model = 16
n_heads = 2
d_ff = 32
encoder_layers = 1
decoder_layers = 1
[train]
steps = 2
TOML
printf '[model]\nd_modle = 16\n' > "$tmp/unknown.toml"
printf '[model]\nd_model = "wide"\n' > "$tmp/type.toml"
printf '[model\nd_model = 16\n' > "$tmp/syntax.toml"

expect_error unknown-key "unknown key model.d_modle" "$bin" train -c "$tmp/unknown.toml" --set train.run_dir="$tmp/r0"
expect_error wrong-type "model.d_model = \"wide\": expected an integer" "$bin" train -c "$tmp/type.toml"
expect_error toml-syntax "syntax.toml:1" "$bin" train -c "$tmp/syntax.toml"
expect_error heads-divide "must be divisible by model.n_heads = 3" "$bin" train -c "$tmp/base.toml" --set model.n_heads=3
expect_error bad-choice "allowed values: post, pre" "$bin" train -c "$tmp/base.toml" --set model.norm=middle
expect_error unknown-set-key "unknown key train.stesp" "$bin" train -c "$tmp/base.toml" --set train.stesp=3
expect_error negative-lr "train.lr = -1" "$bin" train -c "$tmp/base.toml" --set train.lr=-1
expect_error bad-precision "train.precision = \"f8\"" "$bin" train -c "$tmp/base.toml" --set train.precision=f8
expect_error bad-matmul-precision "train.matmul_precision = \"tf32\"" "$bin" train -c "$tmp/base.toml" --set train.matmul_precision=tf32
expect_error bad-loss-scale "train.loss_scale_init" "$bin" train -c "$tmp/base.toml" --set train.precision=f16 --set train.loss_scale_init=0
expect_error bad-override "expected section.key=value" "$bin" train -c "$tmp/base.toml" --set nonsense
expect_error missing-checkpoint "no such file" "$bin" logits --checkpoint "$tmp/none.safetensors" --input "$tmp/x.npy" --out "$tmp/o.npy"

# A real checkpoint, then a truncated copy of it.
"$bin" init -c "$tmp/base.toml" --out "$tmp/model.safetensors" >/dev/null || { echo "FAIL init"; exit 1; }
size=$(stat -c %s "$tmp/model.safetensors")
head -c $((size / 2)) "$tmp/model.safetensors" > "$tmp/truncated.safetensors"
expect_error truncated-checkpoint "truncated" "$bin" logits --checkpoint "$tmp/truncated.safetensors" --input "$tmp/x.npy" --out "$tmp/o.npy"
printf 'not a checkpoint' > "$tmp/junk.safetensors"
expect_error foreign-checkpoint "junk.safetensors" "$bin" logits --checkpoint "$tmp/junk.safetensors" --input "$tmp/x.npy" --out "$tmp/o.npy"

# Nothing the user had is overwritten.
cp "$tmp/model.safetensors" "$tmp/before.safetensors"
expect_error init-no-overwrite "file exists" "$bin" init -c "$tmp/base.toml" --out "$tmp/model.safetensors"
expect_error init-missing-directory "no directory" "$bin" init -c "$tmp/base.toml" --out "$tmp/none/model.safetensors"
expect_error logits-onto-directory "exists and is not a regular file" "$bin" logits --checkpoint "$tmp/model.safetensors" --input "$tmp/x.npy" --out "$tmp"
cmp -s "$tmp/model.safetensors" "$tmp/before.safetensors" || { echo "FAIL init overwrote the checkpoint"; failures=$((failures + 1)); }
"$bin" train -c "$tmp/base.toml" --set train.run_dir="$tmp/run" -q >/dev/null 2>&1 || { echo "FAIL first run"; failures=$((failures + 1)); }
cp "$tmp/run/metrics.jsonl" "$tmp/metrics.before"
expect_error run-dir-taken "already holds a run" "$bin" train -c "$tmp/base.toml" --set train.run_dir="$tmp/run"
cmp -s "$tmp/run/metrics.jsonl" "$tmp/metrics.before" || { echo "FAIL the run directory was modified"; failures=$((failures + 1)); }

# scalelab average: refusals, and it never writes over a source (its optimizer state would go).
expect_error average-one "at least two checkpoints, got 1" "$bin" average "$tmp/model.safetensors" --out "$tmp/avg.safetensors"
expect_error average-missing "none.safetensors" "$bin" average "$tmp/model.safetensors" "$tmp/none.safetensors" --out "$tmp/avg.safetensors"
"$bin" init -c "$tmp/base.toml" --set model.d_ff=64 --out "$tmp/wide.safetensors" >/dev/null || { echo "FAIL init wide"; exit 1; }
expect_error average-differs "first difference: model.d_ff" "$bin" average "$tmp/model.safetensors" "$tmp/wide.safetensors" --out "$tmp/avg.safetensors"
cp "$tmp/run/checkpoint.safetensors" "$tmp/run.before"
expect_error average-over-source "is one of the checkpoints being averaged" "$bin" average "$tmp/run/checkpoint.safetensors" "$tmp/before.safetensors" --out "$tmp/run/checkpoint.safetensors" --force
cmp -s "$tmp/run/checkpoint.safetensors" "$tmp/run.before" || { echo "FAIL average overwrote a source"; failures=$((failures + 1)); }
"$bin" average "$tmp/run/checkpoint.safetensors" "$tmp/before.safetensors" --out "$tmp/avg.safetensors" >/dev/null || { echo "FAIL average"; failures=$((failures + 1)); }
cp "$tmp/avg.safetensors" "$tmp/avg.before"
expect_error average-no-overwrite "file exists" "$bin" average "$tmp/run/checkpoint.safetensors" "$tmp/before.safetensors" --out "$tmp/avg.safetensors"
cmp -s "$tmp/avg.safetensors" "$tmp/avg.before" || { echo "FAIL average overwrote its output"; failures=$((failures + 1)); }

if [ "$failures" -ne 0 ]; then echo "$failures failed"; exit 1; fi
echo "all error cases behave"
