#!/usr/bin/env bash
# The real-task commands end to end on small slices: train a tiny G2P model and a tiny KJV LM,
# then eval (WER/PER, bpc, synthetic exact match), g2p (arguments and stdin), sample, and the
# error paths (one clear line, non-zero exit). Skips a task whose Debian data package is missing.
set -u
bin="${SCALELAB_BIN:?}"
tmp="${SCALELAB_TMP:-/tmp}/g2p-cli-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

expect_error() {  # NAME PATTERN COMMAND...: non-zero exit, one stderr line containing PATTERN
  local name="$1" pattern="$2"
  shift 2
  local err status lines
  err=$("$@" 2>&1 >/dev/null </dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$status" -eq 0 ]; then fail "$name: exit status 0"
  elif [ "$lines" -ne 1 ]; then fail "$name: expected one stderr line, got $lines: $err"
  elif ! printf '%s' "$err" | grep -q -- "$pattern"; then fail "$name: '$err' lacks '$pattern'"
  else ok "$name: $err"; fi
}

expect_failure() {  # NAME PATTERN COMMAND...: non-zero exit and PATTERN on stderr (CLI11 usage
  local name="$1" pattern="$2"  # errors add a "Run with --help" line; the shell may add its own)
  shift 2
  local err status
  err=$("$@" 2>&1 >/dev/null </dev/null)
  status=$?
  if [ "$status" -eq 0 ]; then fail "$name: exit status 0"
  elif ! printf '%s' "$err" | grep -q -- "$pattern"; then fail "$name: '$err' lacks '$pattern'"
  else ok "$name: $(printf '%s' "$err" | grep -- "$pattern" | head -1)"; fi
}

tiny_model='--set model.d_model=32 --set model.n_heads=2 --set model.d_ff=64
  --set model.encoder_layers=1 --set model.decoder_layers=1 --set model.dropout=0.0'

# Synthetic: eval reports loss and exact match.
"$bin" train -q --set data.task=copy --set data.train_size=200 --set data.valid_size=20 $tiny_model \
  --set train.steps=5 --set train.threads=1 --set train.run_dir="$tmp/copy" >/dev/null 2>&1 \
  || fail "train copy"
out=$("$bin" eval -C "$tmp/copy/checkpoint.safetensors" --split valid 2>&1)
if printf '%s' "$out" | grep -q "exact match"; then ok "eval copy"; else fail "eval copy: $out"; fi
# The training data, as a spread sample: every 10th of the 200 training examples.
out=$("$bin" eval -C "$tmp/copy/checkpoint.safetensors" --split train --every 10 2>&1)
if printf '%s' "$out" | grep -q "^examples 20$" && printf '%s' "$out" | grep -q "train split"; then
  ok "eval copy train split"; else fail "eval copy train split: $out"; fi
out=$("$bin" eval -C "$tmp/copy/checkpoint.safetensors" --split train --every 10 --limit 3 2>&1)
if printf '%s' "$out" | grep -q "^examples 3$"; then ok "eval --every then --limit"; else fail "eval --every --limit: $out"; fi
expect_failure "unknown split" "split" "$bin" eval -C "$tmp/copy/checkpoint.safetensors" --split dev
expect_failure "every 0" "every" "$bin" eval -C "$tmp/copy/checkpoint.safetensors" --every 0
expect_error "g2p on a copy checkpoint" "not a G2P" "$bin" g2p -C "$tmp/copy/checkpoint.safetensors" cat
expect_error "sample on a copy checkpoint" "not a language model" \
  "$bin" sample -C "$tmp/copy/checkpoint.safetensors"
expect_failure "missing checkpoint" "checkpoint" "$bin" eval -C "$tmp/none.safetensors"
expect_error "missing dictionary" "pocketsphinx-en-us" "$bin" train --set data.task=cmudict \
  --set data.path=/nonexistent.dict --set train.run_dir="$tmp/nodict"
expect_failure "missing bible program" "bible-kjv" "$bin" train --set data.task=kjv \
  --set data.program=/nonexistent/bible --set model.arch=decoder_only --set train.run_dir="$tmp/nobible"
expect_error "key of another task" "data.symbols" "$bin" train --set data.task=cmudict \
  --set data.symbols=3 --set train.run_dir="$tmp/badkey"

if [ -f /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict ]; then
  "$bin" train -q -c "$SCALELAB_SOURCE/configs/g2p.toml" $tiny_model --set data.max_train_words=100 \
    --set data.max_eval_words=20 --set train.steps=20 --set train.eval_every=0 \
    --set train.threads=1 --set train.run_dir="$tmp/g2p" >/dev/null 2>&1 || fail "train g2p"
  ck="$tmp/g2p/checkpoint.safetensors"
  out=$("$bin" eval -C "$ck" --split valid --beam 1 2>&1)
  if printf '%s' "$out" | grep -q "^WER .* %" && printf '%s' "$out" | grep -q "^PER .* %" \
     && printf '%s' "$out" | grep -q "^words 20$"; then ok "eval g2p greedy"; else fail "eval g2p: $out"; fi
  out=$("$bin" eval -C "$ck" --split train --every 10 --beam 1 2>&1)
  if printf '%s' "$out" | grep -q "^WER .* %" && printf '%s' "$out" | grep -q "^words 10$"; then
    ok "eval g2p train words"; else fail "eval g2p train words: $out"; fi
  out=$("$bin" eval -C "$ck" --beam 3 --length-penalty 1.0 --limit 5 2>&1)
  if printf '%s' "$out" | grep -q "beam 3"; then ok "eval g2p beam"; else fail "eval g2p beam: $out"; fi
  out=$("$bin" g2p -C "$ck" cat Dog 2>&1)
  if [ "$(printf '%s\n' "$out" | grep -c $'\t')" -eq 2 ] && printf '%s' "$out" | grep -q "^Dog"$'\t'; then
    ok "g2p arguments"; else fail "g2p arguments: $out"; fi
  out=$(printf 'cat dog\nbird\n' | "$bin" g2p -C "$ck" --beam 1 2>&1)
  if [ "$(printf '%s\n' "$out" | grep -c $'\t')" -eq 3 ]; then ok "g2p stdin"; else fail "g2p stdin: $out"; fi
  expect_error "unknown characters" "r2d2" "$bin" g2p -C "$ck" cat r2d2
  # Words in messages are quoted (core/quote.hpp): escape sequences, invalid UTF-8 and NUL
  # escaped, never sent raw to the terminal; a word too long for the model is named, capped.
  expect_error "escape sequence in a word" "'ca\\\\x1b\\[31mt' ('\\\\x1b\\[31')" "$bin" g2p -C "$ck" cat $'ca\e[31mt'
  expect_error "invalid UTF-8 in a word" "'caf\\\\xe9' ('\\\\xe9')" "$bin" g2p -C "$ck" $'caf\xe9'
  err=$(printf 'ca\0t\n' | "$bin" g2p -C "$ck" 2>&1 >/dev/null)
  if [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] && printf '%s' "$err" | grep -q "'ca\\\\0t' ('\\\\0')"; then
    ok "NUL in a word from stdin: $err"; else fail "NUL in a word from stdin: $err"; fi
  long=$(printf 'a%.0s' $(seq 1 300))
  expect_error "word too long for the model" "word 'a\{120\}…' (300 bytes) has 300 letters; this model reads at most [0-9]* (model.max_len = [0-9]*, one position for the end token)$" \
    "$bin" g2p -C "$ck" cat "$long"
  for out in "$("$bin" g2p -C "$ck" $'ca\e[31mt' 2>&1)" "$(printf 'ca\0t\n' | "$bin" g2p -C "$ck" 2>&1)"; do
    case "$out" in *$'\e'*) fail "an escape byte reached the terminal: $out" ;; *) ok "no raw escape byte in: $out" ;; esac
  done
  # An ensemble: a second member with its own seed, same task and split.
  "$bin" train -q -c "$SCALELAB_SOURCE/configs/g2p.toml" $tiny_model --set data.max_train_words=100 \
    --set data.max_eval_words=20 --set train.steps=20 --set train.eval_every=0 --set model.seed=2 \
    --set train.seed=2 --set train.threads=1 --set train.run_dir="$tmp/g2p2" >/dev/null 2>&1 \
    || fail "train g2p member 2"
  out=$("$bin" eval -C "$ck" -C "$tmp/g2p2/checkpoint.safetensors" --split valid --beam 2 2>&1)
  if printf '%s' "$out" | grep -q "ensemble of 2" && printf '%s' "$out" | grep -q "^WER .* %" \
     && [ "$(printf '%s\n' "$out" | grep -c "^loss of member")" -eq 2 ]; then
    ok "eval g2p ensemble"; else fail "eval g2p ensemble: $out"; fi
  # A right-to-left member: trained on reversed phones, read backwards, ensembled with an L2R one.
  "$bin" train -q -c "$SCALELAB_SOURCE/configs/g2p.toml" $tiny_model --set data.max_train_words=100 \
    --set data.max_eval_words=20 --set train.steps=20 --set train.eval_every=0 --set model.seed=3 \
    --set data.phone_order=right_to_left --set train.threads=1 --set train.run_dir="$tmp/g2p-r2l" \
    >/dev/null 2>&1 || fail "train g2p right to left"
  out=$("$bin" g2p -C "$tmp/g2p-r2l/checkpoint.safetensors" cat dog 2>&1)
  if [ "$(printf '%s\n' "$out" | grep -c $'\t')" -eq 2 ]; then ok "g2p right to left"; else fail "g2p r2l: $out"; fi
  out=$("$bin" eval -C "$ck" -C "$tmp/g2p-r2l/checkpoint.safetensors" --split valid --beam 2 2>&1)
  if printf '%s' "$out" | grep -q "ensemble of 2" && printf '%s' "$out" | grep -q "^WER .* %" \
     && printf '%s' "$out" | grep -q "^loss of member 1 .*right to left)$"; then
    ok "eval g2p L2R + R2L ensemble"; else fail "eval g2p L2R + R2L ensemble: $out"; fi
  expect_error "phone order of another value" "data.phone_order" "$bin" train \
    -c "$SCALELAB_SOURCE/configs/g2p.toml" --set data.phone_order=up --set train.run_dir="$tmp/bad-order"
  expect_error "ensemble of two tasks" "same task and split" "$bin" eval -C "$ck" \
    -C "$tmp/copy/checkpoint.safetensors"
  expect_error "ensemble of a copy model" "ensembles are for G2P" "$bin" eval \
    -C "$tmp/copy/checkpoint.safetensors" -C "$ck"
  # Distillation: the teacher pronounces the 100 training words; a student trains on them.
  out=$("$bin" distill -q -C "$ck" -C "$tmp/g2p-r2l/checkpoint.safetensors" --beam 2 \
    --out "$tmp/taught.dict" 2>&1)
  words=$(grep -v '^#' "$tmp/taught.dict" | cut -f1 | sort -u | wc -l)
  if [ "$words" -eq 100 ] && printf '%s' "$out" | grep -q "^wrote .*: 100 words$" \
     && grep -q "^# teacher: .*g2p-r2l" "$tmp/taught.dict"; then
    ok "distill (L2R + R2L teacher)"; else fail "distill: $words words, $out"; fi
  before=$(sha256sum "$tmp/taught.dict")
  expect_error "distill over a file" "pass --force" "$bin" distill -C "$ck" --out "$tmp/taught.dict"
  expect_error "distill into a missing directory" "no directory" "$bin" distill -C "$ck" --out "$tmp/none/t.dict"
  expect_error "distill onto a directory" "exists and is not a regular file" "$bin" distill -C "$ck" --out "$tmp"
  [ "$before" = "$(sha256sum "$tmp/taught.dict")" ] && ok "distill left the file alone" \
    || fail "distill changed an existing file"
  "$bin" distill -q -C "$ck" --beam 1 --out "$tmp/taught.dict" --force >/dev/null 2>&1 \
    && ok "distill --force" || fail "distill --force"
  "$bin" train -q -c "$SCALELAB_SOURCE/configs/g2p.toml" $tiny_model --set data.max_train_words=100 \
    --set data.max_eval_words=20 --set train.steps=5 --set train.eval_every=0 \
    --set data.teacher_targets="$tmp/taught.dict" --set train.threads=1 \
    --set train.run_dir="$tmp/student" >/dev/null 2>&1 || fail "train a student"
  out=$("$bin" eval -C "$tmp/student/checkpoint.safetensors" -C "$ck" --split valid --beam 1 2>&1)
  if printf '%s' "$out" | grep -q "ensemble of 2" && printf '%s' "$out" | grep -q "^words 20$"; then
    ok "eval student + teacher"; else fail "eval student + teacher: $out"; fi
  rm "$tmp/taught.dict"  # scoring a student needs its vocabularies, not its teacher's file
  out=$("$bin" eval -C "$tmp/student/checkpoint.safetensors" --split valid --beam 1 2>&1)
  if printf '%s' "$out" | grep -q "^WER .* %"; then ok "eval student without the teacher file"
  else fail "eval student without the teacher file: $out"; fi
  expect_error "missing teacher file" "teacher targets .* not found" "$bin" train \
    -c "$SCALELAB_SOURCE/configs/g2p.toml" --set data.teacher_targets="$tmp/none.dict" \
    --set train.run_dir="$tmp/no-teacher"
  expect_error "teacher_mix alone" "data.teacher_targets" "$bin" train \
    -c "$SCALELAB_SOURCE/configs/g2p.toml" --set data.teacher_mix=add --set train.run_dir="$tmp/mix"
  expect_error "distill a copy model" "not a G2P" "$bin" distill \
    -C "$tmp/copy/checkpoint.safetensors" --out "$tmp/copy.dict"
  # Predictions: every scored word's answer, then two models compared word by word.
  out=$("$bin" eval -C "$ck" --split valid --beam 1 --predictions "$tmp/a.tsv" 2>&1)
  rows=$(grep -vc '^#' "$tmp/a.tsv")
  wrong=$(grep -v '^#' "$tmp/a.tsv" | cut -f3 | grep -c '^wrong$')
  if [ "$rows" -eq 20 ] && printf '%s' "$out" | grep -q "^WER .* ($wrong wrong)$" \
     && grep -q "^# checkpoint: $ck$" "$tmp/a.tsv"; then
    ok "eval --predictions: 20 rows, $wrong wrong as eval says"; else fail "eval --predictions: $rows rows, $wrong wrong, $out"; fi
  "$bin" eval -C "$tmp/g2p2/checkpoint.safetensors" --split valid --beam 1 --predictions "$tmp/b.tsv" \
    >/dev/null 2>&1 || fail "eval --predictions (second model)"
  out=$("$bin" agree "$tmp/a.tsv" "$tmp/b.tsv" 2>&1)
  first=$(printf '%s' "$out" | sed -n 's/^WER first \([0-9.]*\) %.*/\1/p')
  expected=$(awk -v w="$wrong" 'BEGIN { printf "%.2f", 100 * w / 20 }')
  if printf '%s' "$out" | grep -q "^scalelab agree: 20 words$" && [ "$first" = "$expected" ]; then
    ok "agree: first WER $first % from the file"; else fail "agree: '$first' != '$expected': $out"; fi
  out=$("$bin" agree "$tmp/a.tsv" "$tmp/a.tsv" 2>&1)
  if printf '%s' "$out" | grep -q "^same output .* 20  100.00 %$"; then ok "agree with itself"
  else fail "agree with itself: $out"; fi
  before=$(sha256sum "$tmp/a.tsv")
  expect_error "predictions over a file" "pass --force" "$bin" eval -C "$ck" --split valid --predictions "$tmp/a.tsv"
  [ "$before" = "$(sha256sum "$tmp/a.tsv")" ] && ok "eval left the predictions alone" \
    || fail "eval changed an existing predictions file"
  "$bin" eval -C "$ck" --split valid --beam 1 --limit 5 --predictions "$tmp/a.tsv" --force >/dev/null 2>&1 \
    && [ "$(grep -vc '^#' "$tmp/a.tsv")" -eq 5 ] && ok "eval --predictions --force" || fail "eval --predictions --force"
  expect_failure "--force without --predictions" "requires --predictions" "$bin" eval -C "$ck" --force
  expect_error "agree on different samples" "hold 5 and 20 words" "$bin" agree "$tmp/a.tsv" "$tmp/b.tsv"
  sed '$ s/\t[0-9][0-9]*\t/\t99\t/' "$tmp/b.tsv" > "$tmp/edited.tsv"
  expect_error "agree on a hand-edited file" "edited.tsv', line [0-9]*: .* has edits '99'" \
    "$bin" agree "$tmp/b.tsv" "$tmp/edited.tsv"
  expect_error "predictions into a missing directory" "no directory" "$bin" eval -C "$ck" --split valid \
    --predictions "$tmp/none/a.tsv"
  expect_error "agree on a missing file" "not found" "$bin" agree "$tmp/b.tsv" "$tmp/none.tsv"
  expect_error "predictions of a copy model" "predictions is for G2P" "$bin" eval \
    -C "$tmp/copy/checkpoint.safetensors" --predictions "$tmp/copy.tsv"
  expect_failure "beam 0" "beam" "$bin" eval -C "$ck" --beam 0
  expect_error "sample on a g2p checkpoint" "not a language model" "$bin" sample -C "$ck"
else
  echo "skip G2P part: pocketsphinx-en-us is not installed"
fi

if command -v bible >/dev/null 2>&1; then
  "$bin" train -q -c "$SCALELAB_SOURCE/configs/kjv.toml" --set model.d_model=32 --set model.d_ff=64 \
    --set model.decoder_layers=1 --set model.max_len=32 --set data.context=32 --set data.cache_dir="" \
    --set data.max_train_chars=3000 --set data.max_eval_chars=500 --set train.steps=5 \
    --set train.eval_every=0 --set train.threads=1 --set train.run_dir="$tmp/kjv" >/dev/null 2>&1 \
    || fail "train kjv"
  ck="$tmp/kjv/checkpoint.safetensors"
  out=$("$bin" eval -C "$ck" --split valid 2>&1)
  if printf '%s' "$out" | grep -q "^bpc [0-9]" && printf '%s' "$out" | grep -q "^characters 499$"; then
    ok "eval kjv"; else fail "eval kjv: $out"; fi
  a=$("$bin" sample -C "$ck" --prompt "In the" --length 40 --seed 5 2>&1)
  b=$("$bin" sample -C "$ck" --prompt "In the" --length 40 --seed 5 2>&1)
  if [ "$a" = "$b" ] && [ "${a:0:6}" = "In the" ] && [ "${#a}" -ge 40 ]; then ok "sample"; else fail "sample: $a / $b"; fi
  expect_error "prompt with unknown characters" "never saw" "$bin" sample -C "$ck" --prompt "x=1"
  expect_error "escape sequence in the prompt" "never saw: '\\\\x1b\\[31' " "$bin" sample -C "$ck" --prompt $'In \e[31m'
  expect_error "g2p on an LM checkpoint" "not a G2P" "$bin" g2p -C "$ck" cat
else
  echo "skip KJV part: bible-kjv is not installed"
fi

# The benchmark split ships in the repository (data/cmudict-g014b2b): no Debian package needed.
out=$("$bin" baseline --set data.task=cmudict --set data.split=g014b2b --set data.max_train_words=3000 \
  --set data.max_eval_words=100 --split test 2>&1)
if printf '%s' "$out" | grep -q "data.split = g014b2b" && printf '%s' "$out" | grep -q "^test: 100 words, .* WER .* PER"; then
  ok "baseline on g014b2b"; else fail "baseline on g014b2b: $out"; fi
expect_error "unknown data.split" "hash" "$bin" baseline --set data.task=cmudict --set data.split=random
expect_error "key of the other split" "data.path" "$bin" baseline --set data.task=cmudict \
  --set data.split=g014b2b --set data.path=/x
expect_error "baseline on a synthetic task" "cmudict" "$bin" baseline --set data.task=copy

for cmd in eval g2p sample distill; do
  if "$bin" $cmd --help | grep -q -- "--checkpoint"; then ok "$cmd --help"; else fail "$cmd --help"; fi
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
